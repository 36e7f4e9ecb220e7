const http = require('node:http')
http.get('http://127.0.0.1:18999/', r => { let b=''; r.on('data', d => b+=d); r.on('end', () => { const c = process.cpuUsage(); console.log('http', ((c.user+c.system)/1000).toFixed(0), performance.now().toFixed(0)); process.exit(0) }) })
