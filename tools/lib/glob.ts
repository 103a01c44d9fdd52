/**
 * A file-name glob as a RegExp over `/`-separated relative paths: `*` and `?` stay within one path
 * part, `**` spans parts, `{a,b}` picks one, `[abc]` / `[!abc]` is a character class.
 */
export function globToRegExp(glob: string): RegExp {
  let out = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/'
        out += slash ? '(?:.*/)?' : '.*'
        i += slash ? 2 : 1
      } else {
        out += '[^/]*'
      }
    } else if (c === '?') {
      out += '[^/]'
    } else if (c === '{') {
      braces++
      out += '(?:'
    } else if (c === '}' && braces > 0) {
      braces--
      out += ')'
    } else if (c === ',' && braces > 0) {
      out += '|'
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end === -1) {
        out += '\\['
        continue
      }
      const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\')
      out += body.startsWith('!') ? `[^${body.slice(1)}]` : `[${body}]`
      i = end
    } else {
      out += c.replace(/[.+^$()|\\/\]{}]/g, '\\$&')
    }
  }
  return new RegExp(`^${out}${')'.repeat(braces)}$`)
}

/** A matcher for relative paths: a glob without `/` matches the file name at any depth. */
export function globMatcher(glob: string): (relPath: string) => boolean {
  const re = globToRegExp(glob)
  if (glob.includes('/')) return (relPath) => re.test(relPath)
  return (relPath) => re.test(relPath.slice(relPath.lastIndexOf('/') + 1))
}
