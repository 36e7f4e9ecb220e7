import { run as post } from './cleanup.js'
import { getState, saveState } from './commands.js'
import { run as main } from './main.js'

// action.yml names this one bundle for both steps, so the action carries each module once. The main
// step's first act saves the state that tells the runner's later post step which one it is.
const POST = 'post'

if (getState(POST)) await post()
else {
  saveState(POST, 'true')
  await main()
}
