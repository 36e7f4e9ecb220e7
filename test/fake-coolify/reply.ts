/** A response before it is written, so faults like 'truncate' can cut it and guards can rewrite it. */
import { phpJson } from './format.js'
import type { Flavor } from './types.js'

export interface Reply {
  status: number
  headers: Record<string, string>
  body: string
}

export function json(
  flavor: Flavor,
  status: number,
  data: unknown,
  headers: Record<string, string> = {}
): Reply {
  return {
    status,
    headers: {
      'Content-Type': 'application/json',
      // Laravel's default on API responses.
      ...(flavor === '4x' ? { 'Cache-Control': 'no-cache, private' } : {}),
      ...headers
    },
    body: flavor === '4x' ? phpJson(data) : JSON.stringify(data)
  }
}

export function html(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': 'text/html; charset=UTF-8', ...headers }, body }
}

/** The redirect page Symfony renders for a 302. */
export function redirect(location: string): Reply {
  const body =
    '<!DOCTYPE html>\n<html>\n    <head>\n        <meta charset="UTF-8" />\n' +
    `        <meta http-equiv="refresh" content="0;url='${location}'" />\n\n` +
    `        <title>Redirecting to ${location}</title>\n    </head>\n` +
    `    <body>\n        Redirecting to <a href="${location}">${location}</a>.\n    </body>\n</html>`
  return html(302, body, { Location: location })
}

/** Laravel's error page, shown when the client did not ask for JSON. */
export function errorPage(status: number, title: string): Reply {
  return html(
    status,
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n</head>\n` +
      `<body>\n<div class="flex-center">${status} | ${title}</div>\n</body>\n</html>\n`
  )
}

/** What nginx answers when the upstream is down. */
export function nginxBadGateway(): Reply {
  return html(
    502,
    '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n' +
      '<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
    { 'Content-Type': 'text/html', Server: 'nginx' }
  )
}
