const { request, Agent } = require('undici')
;(async () => { const r = await request('http://127.0.0.1:18999/', { dispatcher: new Agent() }); await r.body.text(); const c = process.cpuUsage(); console.log('full', ((c.user+c.system)/1000).toFixed(0), performance.now().toFixed(0)); process.exit(0) })()
