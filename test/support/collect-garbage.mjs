/* global setInterval */
// Preloaded with `node --expose-gc --import`: collects garbage every few milliseconds, as a long,
// chatty build's log makes Node do in time. A deadline held only weakly (AbortSignal.timeout and
// AbortSignal.any on Node 20) is collected at once and never fires.
setInterval(() => globalThis.gc(), 20).unref()
