/** Reading what Coolify answers: its versions. */
import { describe, expect, it } from '@jest/globals'
import { releaseAtLeast } from '../src/coolify/answers.js'

describe("Coolify's versions", () => {
  it('puts a beta before its release and orders betas by number', () => {
    expect(releaseAtLeast('4.0.0-beta.405', '4.0.0-beta.410')).toBe(false)
    expect(releaseAtLeast('4.0.0-beta.410', '4.0.0-beta.410')).toBe(true)
    expect(releaseAtLeast('4.0.0-beta.463', '4.0.0-beta.410')).toBe(true)
    expect(releaseAtLeast('4.0.0', '4.0.0-beta.410')).toBe(true)
    expect(releaseAtLeast('4.0.0-beta.420.7', '4.0.0-beta.420')).toBe(true)
    expect(releaseAtLeast('4.0.0-beta.420', '4.0.0-beta.420.7')).toBe(false)
    expect(releaseAtLeast('4.0.0-beta.442', '4.0.0-beta.443')).toBe(false)
    expect(releaseAtLeast('4.0.0-beta.999', '4.0.0')).toBe(false)
  })

  it('compares major, minor and patch as numbers', () => {
    expect(releaseAtLeast('4.3.11', '4.3.9')).toBe(true)
    expect(releaseAtLeast('4.2.0', '4.3.0-beta.0')).toBe(false)
    expect(releaseAtLeast('v4.3.0-beta.2', '4.3.0-beta.0')).toBe(true)
    expect(releaseAtLeast('5.0.0', '4.10.0')).toBe(true)
  })

  it('says nothing of a version it cannot read', () => {
    expect(releaseAtLeast('4.3', '4.0.0')).toBeUndefined()
    expect(releaseAtLeast('<html>', '4.0.0')).toBeUndefined()
    expect(releaseAtLeast('4.3.11-rc.1', '4.0.0')).toBeUndefined()
  })
})
