const c0 = process.cpuUsage(); const t0 = performance.now()
const what = process.argv[2]
if (what === 'undici') await import('undici')
if (what === 'core') await import('@actions/core')
if (what === 'hc') await import('@actions/http-client')
if (what === 'none') {}
const c = process.cpuUsage(c0)
console.log(what, 'cpu', ((c.user+c.system)/1000).toFixed(0), 'wall', (performance.now()-t0).toFixed(0))
