import { run as cleanUp } from '../cleanup.js'
import { setHost } from '../host.js'
import { actionHost } from './host.js'

// The post step: undoes what a killed main step left, from the state it saved.
setHost(actionHost())
await cleanUp()
