// Preloaded (`node --import`) into a measured process: at exit, writes the process's CPU time and
// peak memory, as the kernel counts them (getrusage), to the file named by BENCH_USAGE_FILE.
import { writeFileSync } from 'node:fs'

const file = process.env.BENCH_USAGE_FILE
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage()
    writeFileSync(
      file,
      JSON.stringify({
        userMs: usage.userCPUTime / 1000,
        systemMs: usage.systemCPUTime / 1000,
        maxRssKb: usage.maxRSS
      })
    )
  })
}
