import { afterEach, beforeEach, jest } from '@jest/globals'

/**
 * Captures what each test writes to stdout (the build log printer, @actions/core's commands)
 * instead of showing it; the array is emptied before each test.
 */
export function captureStdout(): string[] {
  const printed: string[] = []
  beforeEach(() => {
    printed.length = 0
    jest.spyOn(process.stdout, 'write').mockImplementation(text => {
      printed.push(String(text))
      return true
    })
  })
  afterEach(() => {
    jest.restoreAllMocks()
  })
  return printed
}
