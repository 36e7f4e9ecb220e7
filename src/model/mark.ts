/** What a trigger asked for, to recognise the deployment it started in an application's history. */
export interface TriggerMark {
  /** When the trigger went out (epoch ms, this machine's clock). */
  at: number
  pr?: number
  /** The commit asked for, when one was. */
  commit?: string
}
