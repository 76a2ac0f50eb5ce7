// A terminal prompt that does not echo what is typed: raw mode, one key at a time, so the
// password never appears on screen or in the terminal's scroll-back.
export const promptHidden = (question: string): Promise<string> =>
  new Promise((resolve) => {
    const input = process.stdin
    const output = process.stderr
    // Echo goes off before the prompt shows, so nothing typed after seeing it is echoed.
    input.setRawMode(true)
    output.write(question)
    input.resume()
    input.setEncoding("utf8")
    let typed = ""
    const finish = (interrupted: boolean) => {
      input.off("data", onData)
      input.setRawMode(false)
      input.pause()
      output.write("\n")
      if (interrupted) process.exit(130)
      resolve(typed)
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish(false)
        if (char === "\u0003") return finish(true)
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1)
        else if (char >= " ") typed += char
      }
    }
    input.on("data", onData)
  })
