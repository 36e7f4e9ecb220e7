import { describe, expect, it } from '@jest/globals'
import { redactPayloads } from '../src/secrets.js'

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
