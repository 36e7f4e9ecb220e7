/**
 * Real servers between the runner and Coolify, as Debian packages them: Squid and tinyproxy as
 * the runner's outbound proxy, nginx as the reverse proxy in front of Coolify. Each starts on
 * free loopback ports with a configuration written into a temporary folder, in the foreground,
 * and is stopped by `close()`. A missing binary skips its tests, saying how to install it; under
 * `CI=true` it fails them instead (`.ci/run` installs them).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer, type AddressInfo } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

export const BINARIES = {
  squid: '/usr/sbin/squid',
  tinyproxy: '/usr/bin/tinyproxy',
  nginx: '/usr/sbin/nginx',
  openssl: '/usr/bin/openssl'
} as const

export type Binary = keyof typeof BINARIES

/**
 * The binaries of `names` that are not installed, as one line for the test to print; empty when
 * all are. Under `CI=true` a missing one throws: CI must never skip these tests.
 */
export function missing(names: Binary[]): string {
  const absent = names.filter(name => !existsSync(BINARIES[name]))
  if (absent.length === 0) return ''
  const line = `${absent.join(', ')} not installed: sudo apt-get install -y ${absent.join(' ')}`
  if (process.env.CI === 'true') throw new Error(`${line} (CI runs every test)`)
  return line
}

export interface Running {
  /** `http://127.0.0.1:PORT` of the proxy, or of nginx's http port. */
  url: string
  /** The server's own log of requests, as it is now. */
  log(): string
  close(): Promise<void>
}

/** A loopback port free at the moment. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

/**
 * Squid with its default access policy: CONNECT to the SSL ports only (443, and the ports given,
 * as an admin adds an https service's port), any request from localhost. `hosts` are the only
 * names it resolves; it asks no outside resolver and caches nothing.
 */
export async function startSquid(
  hosts: Record<string, string>,
  sslPorts: number[] = []
): Promise<Running> {
  const dir = folder('squid')
  const port = await freePort()
  writeFileSync(
    join(dir, 'hosts'),
    Object.entries(hosts)
      .map(([name, address]) => `${address} ${name}\n`)
      .join('')
  )
  writeFileSync(
    join(dir, 'squid.conf'),
    [
      `http_port 127.0.0.1:${port}`,
      `pid_filename ${dir}/squid.pid`,
      `access_log stdio:${dir}/access.log`,
      `cache_log ${dir}/cache.log`,
      'cache_store_log none',
      `coredump_dir ${dir}`,
      'cache deny all',
      `hosts_file ${dir}/hosts`,
      'dns_nameservers 127.0.0.1',
      'shutdown_lifetime 0 seconds',
      // Squid's default rules, as /etc/squid/squid.conf has them.
      `acl SSL_ports port 443 ${sslPorts.join(' ')}`,
      'acl Safe_ports port 80 21 443 70 210 1025-65535 280 488 591 777',
      'http_access deny !Safe_ports',
      'http_access deny CONNECT !SSL_ports',
      'http_access allow localhost',
      'http_access deny all',
      ''
    ].join('\n')
  )
  // Squid drops root for the `proxy` user, which must write its folder.
  if (userInfo().uid === 0) chownTree(dir, 'proxy')
  const child = spawn(BINARIES.squid, ['-N', '-f', join(dir, 'squid.conf')], { stdio: 'ignore' })
  await listening(port, child, () => readIfThere(join(dir, 'cache.log')))
  return running(port, child, dir, () => readIfThere(join(dir, 'access.log')))
}

/** tinyproxy with its default CONNECT ports (443 and 563), allowing loopback. */
export async function startTinyproxy(): Promise<Running> {
  const dir = folder('tinyproxy')
  const port = await freePort()
  writeFileSync(
    join(dir, 'tinyproxy.conf'),
    [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 600',
      `PidFile "${dir}/tinyproxy.pid"`,
      `LogFile "${dir}/tinyproxy.log"`,
      'LogLevel Connect',
      'MaxClients 50',
      'Allow 127.0.0.1',
      'ConnectPort 443',
      'ConnectPort 563',
      ''
    ].join('\n')
  )
  if (userInfo().uid === 0) chownTree(dir, 'nobody')
  const child = spawn(BINARIES.tinyproxy, ['-d', '-c', join(dir, 'tinyproxy.conf')], {
    stdio: 'ignore'
  })
  const log = (): string => readIfThere(join(dir, 'tinyproxy.log'))
  await listening(port, child, log)
  return running(port, child, dir, log)
}

/** A CA made now, and a certificate it signed for 127.0.0.1 and localhost. */
export interface Certificates {
  ca: string
  cert: string
  key: string
}

export function makeCertificates(): Certificates {
  const dir = folder('ca')
  const openssl = (...args: string[]): void => {
    execFileSync(BINARIES.openssl, args, { cwd: dir, stdio: 'ignore' })
  }
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Test CA',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem'
  )
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'key.pem',
    '-out',
    'server.csr'
  )
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'cert.pem'
  )
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8')
  const made = { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') }
  rmSync(dir, { recursive: true, force: true })
  return made
}

export interface Nginx extends Running {
  /** `https://127.0.0.1:PORT`: Coolify's API behind nginx. */
  httpsUrl: string
}

/**
 * nginx in front of `upstream` (`host:port`), as Coolify is served behind a reverse proxy: http
 * redirected to https, TLS with `certificates`, idle connections closed after 2 s, JSON gzipped
 * for clients that ask, and its own 502 page while the upstream is down.
 */
export async function startNginx(upstream: string, certificates: Certificates): Promise<Nginx> {
  const dir = folder('nginx')
  const [http, https] = [await freePort(), await freePort()]
  writeFileSync(join(dir, 'cert.pem'), certificates.cert)
  writeFileSync(join(dir, 'key.pem'), certificates.key)
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_timeout 2s;
  gzip on;
  gzip_types application/json;
  gzip_min_length 1;
  gzip_proxied any;
  server {
    listen 127.0.0.1:${http};
    return 301 https://$host:${https}$request_uri;
  }
  server {
    listen 127.0.0.1:${https} ssl;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
    location / {
      proxy_pass http://${upstream};
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Connection "";
    }
  }
}
`
  )
  const child = spawn(BINARIES.nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: 'ignore'
  })
  const log = (): string => readIfThere(join(dir, 'access.log'))
  await listening(https, child, () => readIfThere(join(dir, 'error.log')))
  return { ...running(http, child, dir, log), httpsUrl: `https://127.0.0.1:${https}` }
}

function folder(name: string): string {
  return mkdtempSync(join(tmpdir(), `coolify-${name}-`))
}

function chownTree(dir: string, user: string): void {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim())
  chownSync(dir, uid, gid)
}

function readIfThere(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

/** Resolves once `port` accepts connections; rejects, with its log, if the server exits first. */
async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  let exited: number | null | undefined
  child.once('exit', code => (exited = code))
  for (let tries = 0; tries < 200; tries++) {
    if (exited !== undefined) throw new Error(`exited (${exited}) before listening:\n${log()}`)
    const open = await new Promise<boolean>(resolve => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => resolve(true))
      socket.once('error', () => resolve(false))
      socket.once('close', () => socket.destroy())
      socket.once('connect', () => socket.end())
    })
    if (open) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  child.kill('SIGKILL')
  throw new Error(`not listening on ${port} after 10 s:\n${log()}`)
}

function running(port: number, child: ChildProcess, dir: string, log: () => string): Running {
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise(resolve => child.once('exit', resolve))
        child.kill('SIGTERM')
        const late = setTimeout(() => child.kill('SIGKILL'), 3000)
        await exited
        clearTimeout(late)
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
