/**
 * The review app's table of fields against Coolify 4.3.11's schema: every column of the
 * applications row and its settings row is accounted for, and what the table resets is what
 * update_by_uuid takes, back to the column's own default.
 */
import { describe, expect, it } from '@jest/globals'
import {
  flattenApplication,
  isEmptyValue,
  NEW_APPLICATION_FIELDS,
  patchField,
  REVIEW_FIELDS
} from '../src/review-app/fields.js'
import { PATCH_ALLOWED } from '../test/fake-coolify/allow-list.js'
import { DEPLOYMENT_JOB_READS } from '../test/fixtures/coolify-4.3.11-deployment-job.js'
import {
  APPLICATION_COLUMNS,
  APPLICATION_SETTINGS_COLUMNS
} from '../test/fixtures/coolify-4.3.11-columns.js'

/** What the model adds to a read: its appended accessor and the global scope's counts. */
const ADDED_BY_THE_API = ['server_status', 'additional_servers_count', 'additional_networks_count']

const COLUMNS = [
  ...Object.keys(APPLICATION_COLUMNS),
  ...Object.keys(APPLICATION_SETTINGS_COLUMNS).map(column => `settings.${column}`)
]

describe('the table of a review app’s fields', () => {
  it('names every column of 4.3.11’s applications and application_settings', () => {
    const missing = COLUMNS.filter(column => !REVIEW_FIELDS.has(column))
    expect(missing).toEqual([])
  })

  it('names nothing that is neither a column nor added by the API', () => {
    const known = new Set([...COLUMNS, ...ADDED_BY_THE_API])
    expect([...REVIEW_FIELDS.keys()].filter(key => !known.has(key))).toEqual([])
  })

  it('resets only through fields PATCH takes, to the column’s default or off', () => {
    for (const [key, rule] of REVIEW_FIELDS) {
      if (rule.kind !== 'reset') continue
      expect(PATCH_ALLOWED).toContain(patchField(key, rule))
      const column = key.startsWith('settings.')
        ? APPLICATION_SETTINGS_COLUMNS[key.slice('settings.'.length)]
        : APPLICATION_COLUMNS[key]
      // A switch Coolify turns on by default (git submodules) is turned off.
      const to = rule.to === false && column === true ? true : rule.to
      expect({ key, default: column ?? null }).toEqual({ key, default: to })
    }
  })

  it('lists in NEW_APPLICATION_FIELDS each reset switch Coolify turns on by default', () => {
    const onByDefault = [...REVIEW_FIELDS]
      .filter(
        ([key, rule]) =>
          rule.kind === 'reset' &&
          flattenApplication({
            ...APPLICATION_COLUMNS,
            settings: APPLICATION_SETTINGS_COLUMNS
          })[key] === true
      )
      .map(([key]) => key)
    expect(onByDefault.sort()).toEqual(Object.keys(NEW_APPLICATION_FIELDS).sort())
  })

  it('says, for every field the deployment job reads and the review app keeps, what the job does with it', () => {
    const read = Object.keys(DEPLOYMENT_JOB_READS)
    expect(read.filter(key => !REVIEW_FIELDS.has(key))).toEqual([])
    const unexplained = read.filter(key => {
      const rule = REVIEW_FIELDS.get(key)!
      return rule.kind === 'copied' && !(rule.job && rule.job.length > 20)
    })
    expect(unexplained).toEqual([])
    // And claims no use for a field the job does not read.
    const claimed = [...REVIEW_FIELDS].filter(([, rule]) => rule.kind === 'copied' && rule.job)
    expect(claimed.map(([key]) => key).filter(key => !(key in DEPLOYMENT_JOB_READS))).toEqual([])
  })

  it('gives every rule its reason', () => {
    for (const [key, rule] of REVIEW_FIELDS)
      expect({ key, why: rule.why.length > 10 }).toEqual({ key, why: true })
  })

  it('refuses no template that is all defaults', () => {
    const fields = flattenApplication({
      ...APPLICATION_COLUMNS,
      settings: APPLICATION_SETTINGS_COLUMNS
    })
    const refused = [...REVIEW_FIELDS].filter(
      ([key, rule]) => rule.kind === 'refused' && rule.refuses(fields[key])
    )
    expect(refused).toEqual([])
  })
})

describe('flattenApplication and empty values', () => {
  it('names the settings row’s keys settings.<key>, the row’s as they are', () => {
    expect(flattenApplication({ uuid: 'a', settings: { is_static: true }, tags: ['x'] })).toEqual({
      uuid: 'a',
      'settings.is_static': true,
      tags: ['x']
    })
  })

  it('counts null, false, empty text, lists and objects as empty, and nothing else', () => {
    for (const value of [null, undefined, false, '', [], {}]) expect(isEmptyValue(value)).toBe(true)
    for (const value of [0, true, 'x', [0], { a: 1 }]) expect(isEmptyValue(value)).toBe(false)
  })
})
