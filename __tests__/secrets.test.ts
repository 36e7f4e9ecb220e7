import { beforeAll, describe, expect, it } from '@jest/globals'
import { setHost, type Host } from '../src/host.js'
import { mask, maskedForms, redactMasked, redactPayloads } from '../src/config/secrets.js'

beforeAll(() => setHost({ mask: () => undefined } as unknown as Host))

describe('the forms of a masked value', () => {
  // One value with every character an encoder changes: quotes, `&`, `<`, `>`, `@`, `/`, `+`.
  const value = `p@ss/w0rd+Zq9 "it's" <&>`

  it('are those GitHub’s runner masks (actions/runner ValueEncoders.cs, registered in HostContext.cs)', () => {
    const runner = {
      Base64StringEscape: 'cEBzcy93MHJkK1pxOSAiaXQncyIgPCY+',
      Base64StringEscapeShift1: 'QHNzL3cwcmQrWnE5ICJpdCdzIiA8Jj4=',
      Base64StringEscapeShift2: 'c3MvdzByZCtacTkgIml0J3MiIDwmPg==',
      CommandLineArgumentEscape: `p@ss/w0rd+Zq9 \\"it's\\" <&>`,
      ExpressionStringEscape: `p@ss/w0rd+Zq9 "it''s" <&>`,
      // Newtonsoft.Json escapes neither `'` nor `<&>`.
      JsonStringEscape: `p@ss/w0rd+Zq9 \\"it's\\" <&>`,
      UriDataEscape: 'p%40ss%2Fw0rd%2BZq9%20%22it%27s%22%20%3C%26%3E',
      XmlDataEscape: 'p@ss/w0rd+Zq9 &quot;it&apos;s&quot; &lt;&amp;&gt;',
      PowerShellPreAmpersandEscape: `p@ss/w0rd+Zq9 "it's" <&`
    }
    const forms = maskedForms(value)
    expect(forms).toEqual(expect.arrayContaining([value, ...Object.values(runner)]))
    // PowerShellPostAmpersandEscape gives `>`, under six characters: not masked, by either.
    expect(forms).not.toContain('>')
  })

  it('take a value in double quotes without them, as the runner does past eight characters', () => {
    expect(maskedForms('"quoted-secret"')).toContain('quoted-secret')
    expect(maskedForms('"short"')).not.toContain('short')
  })

  it('cover each line of a multi-line value, trimmed, and its forms', () => {
    const forms = maskedForms('-----BEGIN KEY-----\r\n  MIIEvQIBADANBgkq  \n-----END KEY-----\n')
    expect(forms).toEqual(
      expect.arrayContaining([
        '-----BEGIN KEY-----',
        'MIIEvQIBADANBgkq',
        '-----END KEY-----',
        Buffer.from('MIIEvQIBADANBgkq').toString('base64')
      ])
    )
  })

  it('are all left out of a text, longest first, and nothing under four characters', () => {
    mask(value)
    mask('ab')
    const env = Buffer.from(`API_KEY=${value}\nDEBUG=1\n`).toString('base64')
    const text = [
      `url: https://example.com/?key=${encodeURIComponent(value)}`,
      `env: ${env}`,
      `json: {"key": ${JSON.stringify(value)}}`,
      `html: ${value.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)}`,
      'ab stays'
    ].join('\n')
    const shown = redactMasked(text, form => form.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`))
    for (const form of maskedForms(value)) expect(shown).not.toContain(form)
    expect(shown).toContain('url: https://example.com/?key=***')
    expect(shown).toContain('json: {"key": "***"}')
    expect(shown).toContain('html: ***')
    expect(shown).toContain('ab stays')
    // The base64 of the whole file no longer holds the value's.
    expect(
      Buffer.from(shown.split('\n')[1].slice(5).replace(/\*+/g, ''), 'base64').toString()
    ).not.toContain(value)
  })
})

describe('payloads in hidden commands', () => {
  const env = Buffer.from('API_KEY=very-secret-value\nDEBUG=false\n').toString('base64')

  it('are redacted when echoed through base64, whatever the quotes', () => {
    expect(redactPayloads(`echo '${env}' | base64 -d | tee /artifacts/a/.env > /dev/null`)).toBe(
      "echo '<redacted>' | base64 -d | tee /artifacts/a/.env > /dev/null"
    )
    expect(redactPayloads(`echo "${env}"|base64 --decode > .env`)).toBe(
      'echo "<redacted>"|base64 --decode > .env'
    )
    expect(redactPayloads(`bash -c 'echo ${env} | base64 -d > .env'`)).toBe(
      "bash -c 'echo <redacted> | base64 -d > .env'"
    )
  })

  it('are redacted as Coolify 4.3 quotes them for `docker exec … bash -c`', () => {
    // bootstrap/helpers/docker.php, executeInDocker: every `'` of the command becomes `'\\''`.
    const command = `docker exec abc123 bash -c 'echo '\\''${env}'\\'' | base64 -d | tee /artifacts/a/.env > /dev/null'`
    expect(redactPayloads(command)).toBe(
      `docker exec abc123 bash -c 'echo '\\''<redacted>'\\'' | base64 -d | tee /artifacts/a/.env > /dev/null'`
    )
    expect(redactPayloads(`printf %s ${env} | base64 --decode`)).toBe(
      'printf %s <redacted> | base64 --decode'
    )
  })

  it('are redacted in heredocs, keeping the command and its end', () => {
    const heredoc = "cat <<'EOF' > /artifacts/a/.env\nAPI_KEY=very-secret-value\nEOF\necho done"
    expect(redactPayloads(heredoc)).toBe(
      "cat <<'EOF' > /artifacts/a/.env\n<redacted>\nEOF\necho done"
    )
  })

  it('leave other commands alone', () => {
    for (const text of [
      'docker build -t web:abc .',
      'echo hello | tee out.txt',
      'base64 --version'
    ]) {
      expect(redactPayloads(text)).toBe(text)
    }
  })
})
