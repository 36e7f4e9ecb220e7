import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ActionError } from '../src/errors.js'
import { parseCoolifyUrl, parseList, readConfig } from '../src/config/inputs.js'

const BASE = {
  'coolify-url': 'https://coolify.example.com',
  token: 'tok-123456',
  'app-uuid': 'abc123'
}

function read(inputs: Record<string, string>) {
  const masked: string[] = []
  const config = readConfig(
    name => inputs[name] ?? '',
    secret => masked.push(secret)
  )
  return { config, masked }
}

function failure(inputs: Record<string, string>): string {
  try {
    read(inputs)
  } catch (error) {
    expect(error).toBeInstanceOf(ActionError)
    const message = (error as Error).message
    expect(message).not.toContain('\n')
    return message
  }
  throw new Error('expected readConfig to fail')
}

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    const { config } = read(BASE)
    expect(config).toMatchObject({
      instanceUrl: 'https://coolify.example.com',
      apiUrl: 'https://coolify.example.com/api/v1',
      appUuids: ['abc123'],
      tags: [],
      force: false,
      wait: true,
      timeoutMs: 30 * 60_000,
      pollIntervalMs: 3000,
      cancelOnTimeout: true,
      cancelOnAbort: true,
      logs: true,
      debugLogs: false,
      headers: {},
      comment: true,
      deletePreview: false
    })
    expect(config.pr).toBeUndefined()
    expect(config.imageTag).toBeUndefined()
  })

  it('masks the token, header values and env values before anything else', () => {
    const { masked } = read({
      ...BASE,
      headers: 'CF-Access-Client-Id: id-value\nCF-Access-Client-Secret: secret-value',
      env: 'VERSION=1.2.3\nAPI_KEY=very-secret'
    })
    expect(masked).toEqual(
      expect.arrayContaining(['tok-123456', 'id-value', 'secret-value', '1.2.3', 'very-secret'])
    )
  })

  it('leaves env values that give nothing away unmasked, as masking them would blank the log and its links', () => {
    const plain = ['1', 'dev', '3000', '0.5', 'https', 'production', 'INFO']
    const secret = ['abcd1', 'Hunter22', 'longerthantwelve', 'postgres://u:p@db', '12345678']
    const env = [...plain, ...secret].map((value, i) => `K${i}=${value}`).join('\n')
    const { masked } = read({ ...BASE, env })
    for (const value of plain) expect(masked).not.toContain(value)
    for (const value of secret) expect(masked).toContain(value)
  })

  it('masks header values even when a later input is wrong', () => {
    const masked: string[] = []
    expect(() =>
      readConfig(
        name => ({ ...BASE, headers: 'X-Secret: hush-9f2', timeout: 'soon' })[name] ?? '',
        secret => masked.push(secret)
      )
    ).toThrow(/timeout/)
    expect(masked).toContain('hush-9f2')
  })

  it('reads booleans in any case and durations in every form', () => {
    const { config } = read({
      ...BASE,
      force: 'TRUE',
      wait: 'False',
      timeout: '1h30m',
      'poll-interval': '500ms'
    })
    expect(config.force).toBe(true)
    expect(config.wait).toBe(false)
    expect(config.timeoutMs).toBe(5_400_000)
    expect(config.pollIntervalMs).toBe(500)
  })

  it('reads lists separated by commas, spaces or newlines', () => {
    expect(read({ ...BASE, 'app-uuid': 'a1, b2\nc3  d4,a1' }).config.appUuids).toEqual([
      'a1',
      'b2',
      'c3',
      'd4'
    ])
    expect(parseList(' x ,, y ')).toEqual(['x', 'y'])
  })

  it('reads app as names, separated by commas or newlines only, each trimmed', () => {
    const { config } = read({
      ...BASE,
      'app-uuid': '',
      app: ' web ,My shop/production/api\n\nworker queue, web'
    })
    expect(config.appNames).toEqual(['web', 'My shop/production/api', 'worker queue'])
    expect(config.appUuids).toEqual([])
    expect(read(BASE).config.appNames).toEqual([])
  })

  it('reads headers', () => {
    const { config } = read({
      ...BASE,
      headers: '# Cloudflare Access\nCF-Access-Client-Id: a:b\n\nX-Other:  v '
    })
    expect(config.headers).toEqual({ 'CF-Access-Client-Id': 'a:b', 'X-Other': 'v' })
  })

  it('refuses an Accept-Encoding in headers: answers are read as Coolify sends them', () => {
    expect(failure({ headers: 'CF-Access-Client-Id: id\naccept-encoding: gzip' })).toBe(
      'Input `headers`, line 2: accept-encoding asks for compressed answers, which the action does not read; remove that line.'
    )
  })

  it('refuses headers about the connection or the proxy, saying why', () => {
    expect(failure({ headers: 'X-Id: a\nExpect: 100-continue' })).toBe(
      'Input `headers`, line 2: Expect asks Coolify to confirm before a body is sent, which the action never waits for; remove that line.'
    )
    expect(failure({ headers: 'Proxy-Authorization: Basic abc' })).toBe(
      'Input `headers`, line 1: Proxy-Authorization is for the proxy, which takes its credentials from the proxy variable (http://user:password@proxy:3128); remove that line.'
    )
    for (const name of ['Keep-Alive', 'Connection', 'Transfer-Encoding', 'Upgrade']) {
      expect(failure({ headers: `${name}: x` })).toBe(
        `Input \`headers\`, line 1: ${name} is about the connection, which the action manages itself; remove that line.`
      )
    }
  })

  it('reads env as variables: comments skipped, the last line of a key wins', () => {
    const { config } = read({
      ...BASE,
      env: '# build\nURL=https://x.example.com/?a=b\nEMPTY=\nMODE=dev\n\nMODE=prod'
    })
    expect(config.env).toEqual([
      { key: 'URL', value: 'https://x.example.com/?a=b' },
      { key: 'EMPTY', value: '' },
      { key: 'MODE', value: 'prod' }
    ])
    expect(read({ ...BASE, env: '# nothing yet' }).config.env).toBeUndefined()
    expect(read(BASE).config.env).toBeUndefined()
  })

  it('reads a pull request number', () => {
    expect(read({ ...BASE, pr: '42' }).config.pr).toBe(42)
  })

  it('reads an image tag as Docker allows it', () => {
    expect(read({ ...BASE, 'image-tag': ' pr-42_v1.2 ' }).config.imageTag).toBe('pr-42_v1.2')
    expect(read({ ...BASE, 'image-tag': 'a'.repeat(128) }).config.imageTag).toHaveLength(128)
    for (const tag of ['-pr', '.pr', 'pr/42', 'pr:42', 'a'.repeat(129)]) {
      expect(failure({ ...BASE, 'image-tag': tag })).toContain('Input `image-tag`')
    }
  })

  it('takes delete-preview only with a pull request number and app-uuid', () => {
    const removal = { ...BASE, pr: '42', 'delete-preview': 'true' }
    expect(read(removal).config).toMatchObject({ deletePreview: true, pr: 42 })
    expect(failure({ ...removal, pr: '' })).toContain('`delete-preview` needs `pr`')
    expect(failure({ ...removal, 'app-uuid': '', tag: 'prod', pr: '' })).toContain(
      '`delete-preview` needs `pr`'
    )
  })

  it('reads a CA certificate from its text or a file', () => {
    const pem = readFileSync(new URL('../test/fixtures/tls/ca.pem', import.meta.url), 'utf8')
    expect(read({ ...BASE, 'ca-certificate': pem }).config.caCertificate).toBe(pem)
    const file = join(mkdtempSync(join(tmpdir(), 'ca-')), 'ca.pem')
    writeFileSync(file, pem)
    expect(read({ ...BASE, 'ca-certificate': file }).config.caCertificate).toBe(pem)
  })

  it('takes a CA certificate flattened to one line, and refuses one that does not parse', () => {
    const pem = readFileSync(new URL('../test/fixtures/tls/ca.pem', import.meta.url), 'utf8')
    const flat = pem.trim().replace(/\n/g, ' ')
    expect(read({ ...BASE, 'ca-certificate': flat }).config.caCertificate).toBe(pem)
    const broken = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
    expect(failure({ ...BASE, 'ca-certificate': broken })).toMatch(
      /^Input `ca-certificate`: certificate 1 in the PEM text does not parse/
    )
  })

  it('refuses a pull request number beyond what a number holds exactly', () => {
    expect(failure({ ...BASE, pr: '99999999999999999999999' })).toMatch(/^Input `pr`: "9+" is not/)
  })

  it('refuses `rollback-on-failure` with `wait: false`, which would never roll back', () => {
    expect(
      failure({ ...BASE, commit: 'a'.repeat(40), 'rollback-on-failure': 'true', wait: 'false' })
    ).toMatch(/^Inputs `rollback-on-failure` and `wait: false`/)
  })

  it('masks a header value worth masking, not a plain word', () => {
    const { masked } = read({
      ...BASE,
      headers: 'X-Forwarded-Proto: https\nCF-Access-Client-Secret: s3cr3t-value'
    })
    expect(masked).toContain('s3cr3t-value')
    expect(masked).not.toContain('https')
  })

  it.each([
    [{ 'coolify-url': '' }, /`coolify-url` is empty/],
    [{ 'coolify-url': 'coolify.example.com' }, /`coolify-url`.*not an http\(s\) address/],
    [{ 'coolify-url': 'ftp://coolify.example.com' }, /`coolify-url`/],
    [{ 'coolify-url': 'https://user:pw@coolify.example.com' }, /user name or password/],
    [{ token: '  ' }, /`token` is empty/],
    [{ 'app-uuid': '' }, /Give `app` .*, `app-uuid` or `tag`: all are empty/],
    [{ tag: 'web' }, /either `app-uuid` or `tag`, not both/],
    [{ 'app-uuid': '', app: 'web', tag: 'prod' }, /either `app` or `tag`, not both/],
    [{ app: 'web' }, /either `app` or `app-uuid`, not both/],
    [{ 'app-uuid': '', app: 'web\tsite' }, /`app` holds a control character/],
    [{ 'app-uuid': 'abc/../x' }, /`app-uuid`: "abc\/\.\.\/x" is not a uuid/],
    [{ force: 'yes' }, /`force` must be true or false, not "yes"/],
    [{ wait: '1' }, /`wait` must be true or false/],
    [{ timeout: '10 minutes' }, /`timeout`: "10 minutes" is not a duration/],
    [{ timeout: '0' }, /`timeout`/],
    [{ timeout: '24h1s' }, /`timeout`: "24h1s" is more than 24h/],
    [{ 'health-timeout': '600000h' }, /`health-timeout`: "600000h" is more than 24h/],
    [{ 'poll-interval': 'fast' }, /`poll-interval`/],
    [{ pr: 'abc' }, /`pr`: "abc" is not a pull request number/],
    [{ headers: 'no colon here' }, /`headers`, line 1/],
    [
      { headers: 'Authorization: Bearer x' },
      /`headers`, line 1: Authorization is set by the action/
    ],
    [{ 'ca-certificate': '/no/such/file.pem' }, /`ca-certificate`/],
    [{ env: 'not a pair' }, /`env`, line 1/]
  ])('refuses %j with one line naming the input', (inputs, expected) => {
    expect(failure({ ...BASE, ...inputs })).toMatch(expected)
  })

  it('never echoes a header value in its error', () => {
    expect(failure({ ...BASE, headers: 'Bad Name: secret-value' })).not.toContain('secret-value')
  })
})

describe('trigger: false', () => {
  it('cancels nothing it did not start, unless told to', () => {
    expect(read({ ...BASE, trigger: 'false' }).config).toMatchObject({
      trigger: false,
      cancelOnTimeout: false,
      cancelOnAbort: false
    })
    expect(
      read({ ...BASE, trigger: 'false', 'cancel-on-timeout': 'true', 'cancel-on-abort': 'true' })
        .config
    ).toMatchObject({ cancelOnTimeout: true, cancelOnAbort: true })
    expect(read(BASE).config).toMatchObject({
      trigger: true,
      cancelOnTimeout: true,
      cancelOnAbort: true
    })
  })

  it('takes commit as the commit to follow, and refuses what would start or change something', () => {
    expect(read({ ...BASE, trigger: 'false', commit: 'ABCDEF1' }).config.commit).toBe('abcdef1')
    for (const [input, value] of [
      ['env', 'A=1'],
      ['domains', 'https://x.example.com'],
      ['review-app', 'true'],
      ['delete-preview', 'true']
    ]) {
      expect(failure({ ...BASE, trigger: 'false', pr: '3', [input]: value })).toContain(
        `\`${input}\``
      )
    }
    expect(failure({ ...BASE, 'app-uuid': '', tag: 'prod', trigger: 'false' })).toContain('`tag`')
    expect(failure({ ...BASE, trigger: 'false', wait: 'false' })).toMatch(/would do nothing/)
  })
})

describe('review apps', () => {
  const review = { ...BASE, 'review-app': 'true', pr: '7' }

  it('put the pull request number in review-domain', () => {
    const { config } = read({
      ...review,
      'review-domain': 'https://pr-{pr}.preview.example.com, https://{pr}.example.org'
    })
    expect(config).toMatchObject({
      reviewApp: true,
      reviewDomain: 'https://pr-7.preview.example.com, https://7.example.org'
    })
  })

  it('need a pull request and exactly one template', () => {
    expect(failure({ ...review, pr: '' })).toMatch(/`review-app` needs `pr`/)
    expect(failure({ ...review, 'app-uuid': 'abc123,def456' })).toMatch(
      /exactly one application in `app` or `app-uuid`/
    )
    expect(failure({ ...review, 'app-uuid': '', app: 'web\napi' })).toMatch(
      /exactly one application in `app` or `app-uuid`/
    )
    expect(read({ ...review, 'app-uuid': '', app: 'web' }).config).toMatchObject({
      reviewApp: true,
      appNames: ['web']
    })
    expect(failure({ ...review, 'app-uuid': '', tag: 'prod' })).toMatch(
      /`pr` works with `app` or `app-uuid` only/
    )
    expect(failure({ ...review, 'image-tag': 'v1' })).toMatch(/`image-tag`.*`review-app`/)
  })

  it('refuse a review-domain that is not an address', () => {
    expect(failure({ ...review, 'review-domain': 'pr-{pr}.example.com' })).toMatch(
      /`review-domain`: "pr-7.example.com" is not an http\(s\) address/
    )
  })
})

describe('control characters', () => {
  const SECRET = 'hush-7f3a'
  const CONTROLS: Record<string, string> = {
    CR: '\r',
    LF: '\n',
    TAB: '\t',
    NUL: '\u0000',
    'U+0001': '\u0001',
    ESC: '\u001b',
    'U+001F': '\u001f',
    DEL: '\u007f'
  }
  const BLANKS = ['\r', '\n', '\t']

  /** Where a control character can go, and the characters that separate items there instead. */
  const PLACES: Array<{
    where: string
    inputs: (c: string) => Record<string, string>
    separators?: string[]
  }> = [
    { where: 'Input `token`', inputs: c => ({ token: `tok${c}${SECRET}` }) },
    { where: 'Input `github-token`', inputs: c => ({ 'github-token': `ghs_${c}${SECRET}` }) },
    {
      where: 'Input `headers`, line 2',
      inputs: c => ({ headers: `X-Id: id\nX-Secret: ${SECRET}${c}more` }),
      separators: ['\n']
    },
    {
      where: 'Input `env`, line 2 (API_KEY)',
      inputs: c => ({ env: `MODE=dev\nAPI_KEY=${SECRET}${c}more` }),
      separators: ['\n']
    },
    { where: 'Input `app-uuid`', inputs: c => ({ 'app-uuid': `abc${c}def` }), separators: BLANKS },
    {
      where: 'Input `tag`',
      inputs: c => ({ 'app-uuid': '', tag: `web${c}api` }),
      separators: BLANKS
    },
    { where: 'Input `git-branch`', inputs: c => ({ 'git-branch': `main${c}x` }) },
    { where: 'Input `domains`', inputs: c => ({ domains: `https://a.example.com${c}x` }) },
    { where: 'Input `pr`', inputs: c => ({ pr: `4${c}2` }) },
    {
      where: 'Input `coolify-url`',
      inputs: c => ({ 'coolify-url': `https://coo${c}lify.example.com` })
    },
    { where: 'Input `environment`', inputs: c => ({ environment: `prod${c}x` }) },
    { where: 'Input `force`', inputs: c => ({ force: `tr${c}ue` }) },
    { where: 'Input `timeout`', inputs: c => ({ timeout: `1${c}m` }) },
    { where: 'Input `ca-certificate`', inputs: c => ({ 'ca-certificate': `/etc/ca${c}.pem` }) }
  ]

  const cases = PLACES.flatMap(place =>
    Object.entries(CONTROLS)
      .filter(([, c]) => !place.separators?.includes(c))
      .map(([name, c]) => ({ ...place, name, c }))
  )

  it.each(cases)('$where: refuses $name with one line that names the input', c => {
    const message = failure({ ...BASE, ...c.inputs(c.c) })
    expect(message).toBe(
      `${c.where} holds a control character (a line break, tab or the like): remove it.`
    )
    expect(message).not.toContain(SECRET)
  })

  it('masks a secret before refusing it', () => {
    const masked: string[] = []
    expect(() =>
      readConfig(
        name => ({ ...BASE, token: `tok\n${SECRET}` })[name] ?? '',
        secret => masked.push(secret)
      )
    ).toThrow(/`token` holds a control character/)
    expect(masked).toEqual([`tok\n${SECRET}`])
  })

  it.each([
    [{ token: `tök-${SECRET}` }, 'Input `token`'],
    [{ 'github-token': `ghs_€${SECRET}` }, 'Input `github-token`'],
    [{ headers: `X-Secret: ${SECRET}✓` }, 'Input `headers`, line 1']
  ])('refuses %j, which an HTTP header cannot carry', (inputs, where) => {
    const message = failure({ ...BASE, ...inputs })
    expect(message).toBe(
      `${where} holds a character an HTTP header cannot carry (only printable ASCII): remove it.`
    )
    expect(message).not.toContain(SECRET)
  })

  it('takes line breaks and blanks around values as the separators they are', () => {
    const { config } = read({
      ...BASE,
      token: `\t${SECRET}\r\n`,
      'app-uuid': 'abc\r\ndef\tghi',
      headers: 'X-A: a\r\nX-B:\tb\t',
      env: 'A=1\r\nB=two\t',
      'git-branch': ' main\n'
    })
    expect(config.token).toBe(SECRET)
    expect(config.appUuids).toEqual(['abc', 'def', 'ghi'])
    expect(config.headers).toEqual({ 'X-A': 'a', 'X-B': 'b' })
    expect(config.env).toEqual([
      { key: 'A', value: '1' },
      { key: 'B', value: 'two' }
    ])
  })
})

describe('parseCoolifyUrl', () => {
  it.each([
    'https://coolify.example.com',
    'https://coolify.example.com/',
    'https://coolify.example.com/api/v1',
    'https://coolify.example.com/api/v1/',
    ' https://coolify.example.com// '
  ])('accepts %j', text => {
    expect(parseCoolifyUrl(text)).toEqual({
      instanceUrl: 'https://coolify.example.com',
      apiUrl: 'https://coolify.example.com/api/v1'
    })
  })

  it('keeps a port and a path prefix', () => {
    expect(parseCoolifyUrl('http://10.0.0.5:8000/coolify/api/v1').apiUrl).toBe(
      'http://10.0.0.5:8000/coolify/api/v1'
    )
  })
})

describe('settings with `pr`', () => {
  it('refuses `git-branch` and `domains`, which would change production, naming the input', () => {
    for (const [input, value] of [
      ['git-branch', 'feature'],
      ['domains', 'https://pr.example.com']
    ]) {
      expect(failure({ ...BASE, pr: '3', [input]: value })).toMatch(
        new RegExp(`^Input \`${input}\` changes production's application`)
      )
    }
    expect(read({ ...BASE, pr: '3', env: 'A=1' }).config.env).toEqual([{ key: 'A', value: '1' }])
    const review = { ...BASE, pr: '3', 'review-app': 'true', 'git-branch': 'feature' }
    expect(read(review).config.gitBranch).toBe('feature')
  })
})
