/**
 * What a token may ask of the instance itself (4x): its version, its team, and the GETs of POST
 * routes that only answer 405 once the route's ability was checked.
 */
import type { Ctx } from './context.js'
import { html, json } from './reply.js'
import type { Reply } from './reply.js'
import type { FakeOptions } from './types.js'

/** The version each flavor of the fake stands for. */
const VERSIONS: Record<NonNullable<FakeOptions['version']>, string> = {
  '4.0-beta': '4.0.0-beta.405',
  '4.2': '4.2.0',
  '4.3': '4.3.11'
}

/**
 * GET /version: OtherController::version answers `response(config(…version))`, plain text that
 * Laravel sends as text/html.
 */
export function version(of: FakeOptions['version'] = '4.3'): Reply {
  return html(200, VERSIONS[of])
}

/** GET /team: TeamController::current_team, the token's team without its pivot. */
export function currentTeam(ctx: Ctx): Reply {
  return json(ctx.flavor, 200, {
    id: 0,
    name: 'Root Team',
    description: 'The root team',
    personal_team: true,
    show_boarding: false
  })
}

/**
 * OtherController::post_required: since 4.2.0 a GET of /deploy, of /servers/{uuid}/validate (and
 * of start, stop, restart, enable, disable) answers only this, after the route's ability check.
 */
export function postRequired(ctx: Ctx): Reply {
  return json(
    ctx.flavor,
    405,
    { message: 'This endpoint has changed to a POST request.' },
    {
      Allow: 'POST'
    }
  )
}
