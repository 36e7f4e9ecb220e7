import { run as cleanUp } from '../cleanup.js'
import { setHost } from '../host.js'
import { actionHost } from './host.js'

/** The action's post step: undoes what a killed main step left, from the state it saved. */
export async function run(): Promise<void> {
  setHost(actionHost())
  await cleanUp()
}
