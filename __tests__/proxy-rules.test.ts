import { describe, expect, it } from '@jest/globals'
import { proxyFor, proxySecrets } from '../src/transport/proxy.js'

const proxied = (url: string, env: NodeJS.ProcessEnv): string | undefined =>
  proxyFor(new URL(url), env)?.name

describe('the proxy a request takes', () => {
  it('is HTTPS_PROXY for https and HTTP_PROXY for http, the lower-case name first', () => {
    const env = { HTTPS_PROXY: 'http://secure:3128', HTTP_PROXY: 'http://plain:3128' }
    expect(proxied('https://coolify.example.com', env)).toBe('secure:3128')
    expect(proxied('http://coolify.example.com', env)).toBe('plain:3128')
    expect(proxied('https://coolify.example.com', { ...env, https_proxy: 'lower:8080' })).toBe(
      'lower:8080'
    )
    // As the runner's own client: https does not fall back on HTTP_PROXY.
    expect(proxied('https://coolify.example.com', { HTTP_PROXY: 'http://plain:3128' })).toBe(
      undefined
    )
    expect(proxied('https://coolify.example.com', { HTTPS_PROXY: 'bare-host:3128' })).toBe(
      'bare-host:3128'
    )
  })

  it('is none for loopback, and for what NO_PROXY names', () => {
    const env = { HTTPS_PROXY: 'http://proxy:3128' }
    for (const url of ['https://localhost', 'https://127.0.0.1:8000', 'https://[::1]']) {
      expect(proxied(url, env)).toBeUndefined()
    }
    const target = 'https://coolify.example.com'
    for (const noProxy of [
      'coolify.example.com',
      'example.com',
      '.example.com',
      'EXAMPLE.COM',
      'coolify.example.com:443',
      'a, *',
      ' other.org , example.com '
    ]) {
      expect(proxied(target, { ...env, NO_PROXY: noProxy })).toBeUndefined()
    }
    for (const noProxy of ['other.example.com', 'ample.com', 'coolify.example.com:8443', '']) {
      expect(proxied(target, { ...env, no_proxy: noProxy })).toBe('proxy:3128')
    }
  })

  it('reads NO_PROXY as curl and Go do: `*.` domains, CIDR ranges, IPv6 with or without brackets', () => {
    const env = { HTTPS_PROXY: 'http://proxy:3128', HTTP_PROXY: 'http://proxy:3128' }
    const bypassed: Array<[string, string]> = [
      ['https://coolify.example.com', '*.example.com'],
      ['http://10.1.2.3:8000', '10.0.0.0/8'],
      ['http://10.1.2.3:8000', '10.1.2.3/32'],
      ['http://192.168.7.9:8000', 'other, 192.168.0.0/16'],
      ['https://[fd00::1]', 'fd00::1'],
      ['https://[fd00::1]', '[fd00::1]'],
      ['https://[fd00::1]:8443', '[fd00::1]:8443'],
      ['https://[fd00::abcd]', 'fd00::/16']
    ]
    for (const [url, noProxy] of bypassed) {
      expect([url, noProxy, proxied(url, { ...env, NO_PROXY: noProxy })]).toEqual([
        url,
        noProxy,
        undefined
      ])
    }
    const proxiedStill: Array<[string, string]> = [
      ['http://11.1.2.3:8000', '10.0.0.0/8'],
      ['http://10.1.2.3:8000', '10.1.2.4/32'],
      ['https://[fd01::1]', 'fd00::/16'],
      ['https://[fd00::1]:8443', '[fd00::1]:443'],
      ['https://example.com', '*.example.com'],
      ['https://coolify.example.com', '10.0.0.0/8']
    ]
    for (const [url, noProxy] of proxiedStill) {
      expect([url, noProxy, proxied(url, { ...env, NO_PROXY: noProxy })]).toEqual([
        url,
        noProxy,
        'proxy:3128'
      ])
    }
  })

  it('gives the password of a proxy URL to mask, and names the proxy without it', () => {
    const env = { HTTPS_PROXY: 'http://deploy:p%40ss-word@proxy:3128' }
    expect(proxySecrets(env)).toEqual(['p%40ss-word', 'p@ss-word'])
    expect(proxied('https://coolify.example.com', env)).toBe('proxy:3128')
    expect(proxySecrets({ HTTP_PROXY: 'http://proxy:3128' })).toEqual([])
  })
})

describe('a proxy variable that is not a proxy URL', () => {
  const target = new URL('https://coolify.example.com')

  it('is refused, naming the variable and never its value', () => {
    for (const value of ['http://pr oxy:3128', 'http://proxy:99999', 'http://:3128']) {
      const attempt = (): unknown => proxyFor(target, { HTTPS_PROXY: value })
      expect(attempt).toThrow(
        'HTTPS_PROXY is not a proxy URL: give it as http://host:port (or https://, with user:password@ before the host if the proxy asks for them), or add coolify.example.com to NO_PROXY.'
      )
    }
  })

  it('is its origin when it carries a path, a query or a fragment', () => {
    const proxy = proxyFor(target, { https_proxy: 'http://u:p@proxy:3128/some/path?x=1#y' })
    expect(proxy?.url.href).toBe('http://proxy:3128/')
    expect(proxy?.name).toBe('proxy:3128')
    expect(proxy?.credentials).toBe('u:p')
  })
})
