const Agent = require('undici/lib/dispatcher/agent')
const api = require('undici/lib/api/api-request')
;(async () => { const a = new Agent(); const r = await new Promise((res, rej) => api.call(a, { origin: 'http://127.0.0.1:18999', path: '/', method: 'GET' }, (e, d) => e ? rej(e) : res(d))); await r.body.text(); const c = process.cpuUsage(); console.log('deep', ((c.user+c.system)/1000).toFixed(0), performance.now().toFixed(0)); process.exit(0) })()
