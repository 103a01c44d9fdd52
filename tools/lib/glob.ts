/**
 * File-name globs over `/`-separated relative paths: `*` and `?` stay within one path part, `**`
 * spans parts (`**​/` also matches no folder at all), `{a,b}` picks one, `[abc]` / `[!abc]` / `[a-z]`
 * is a character class (never matching `/`).
 *
 * A glob is a tool argument, so a model (or whoever steers it) writes it. Translated to a
 * backtracking RegExp, `*a*a*a*a*a*b` takes time polynomial in the name with the number of stars as
 * the exponent, stalling the host. So a glob is matched by simulating all of its positions at once
 * (a Thompson NFA): time proportional to the path length × the glob length, whatever the glob.
 */

type Token =
  | { readonly kind: 'char'; readonly char: string }
  /** `?`: one character other than `/`. */
  | { readonly kind: 'one' }
  | { readonly kind: 'class'; readonly negated: boolean; readonly ranges: readonly (readonly [string, string])[] }
  /** `*`: any run of characters other than `/`. */
  | { readonly kind: 'star' }
  /** `**`: any run of characters. */
  | { readonly kind: 'globstar' }
  /** Matches nothing itself; the match may go on at the next token or `skip` tokens further. */
  | { readonly kind: 'skip'; readonly skip: number }

/** Brace alternatives multiply (`{a,b}{c,d}` is four): more than this is refused. */
export const MAX_ALTERNATIVES = 256
/** Longer globs are refused (they would only be typos or attacks). */
export const MAX_GLOB_LENGTH = 1024

/** A matcher for relative paths: a glob without `/` matches the file name at any depth. */
export function globMatcher(glob: string): (relPath: string) => boolean {
  const alternatives = parseGlob(glob)
  const matches = (text: string) => alternatives.some((tokens) => matchTokens(tokens, text))
  if (glob.includes('/')) return matches
  return (relPath) => matches(relPath.slice(relPath.lastIndexOf('/') + 1))
}

/** The glob as token sequences, one per brace alternative. */
function parseGlob(glob: string): Token[][] {
  if (glob.length > MAX_GLOB_LENGTH) throw new Error(`the glob is longer than ${MAX_GLOB_LENGTH} characters`)
  let index = 0

  /** A sequence up to the end, or (inside braces) up to its `,` or `}`: every alternative it spells. */
  const sequence = (inBraces: boolean): Token[][] => {
    let results: Token[][] = [[]]
    const push = (...tokens: Token[]) => {
      for (const result of results) result.push(...tokens)
    }
    while (index < glob.length) {
      const c = glob[index]!
      if (inBraces && (c === ',' || c === '}')) break
      index += 1
      if (c === '*') {
        if (glob[index] !== '*') {
          push({ kind: 'star' })
        } else if (glob[index + 1] === '/') {
          // `**/`: nothing, or any run ending in `/`.
          index += 2
          push({ kind: 'skip', skip: 3 }, { kind: 'globstar' }, { kind: 'char', char: '/' })
        } else {
          index += 1
          push({ kind: 'globstar' })
        }
      } else if (c === '?') {
        push({ kind: 'one' })
      } else if (c === '[') {
        const end = glob.indexOf(']', index + 1)
        if (end === -1) {
          push({ kind: 'char', char: '[' })
        } else {
          push(characterClass(glob.slice(index, end)))
          index = end + 1
        }
      } else if (c === '{') {
        const options: Token[][] = []
        for (;;) {
          options.push(...sequence(true))
          // An unclosed brace closes at the end of the glob.
          if (index >= glob.length) break
          index += 1
          if (glob[index - 1] === '}') break
        }
        if (results.length * options.length > MAX_ALTERNATIVES) {
          throw new Error(`the glob spells more than ${MAX_ALTERNATIVES} alternatives with its braces`)
        }
        results = results.flatMap((result) => options.map((option) => [...result, ...option]))
      } else {
        push({ kind: 'char', char: c })
      }
    }
    return results
  }

  return sequence(false)
}

/** `body` is what stands between `[` and `]`: `!` or `^` first negates; `a-z` is a range. */
function characterClass(body: string): Token {
  const negated = body.startsWith('!') || body.startsWith('^')
  const chars = negated ? body.slice(1) : body
  const ranges: [string, string][] = []
  for (let i = 0; i < chars.length; i++) {
    const from = chars[i]!
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      ranges.push([from, chars[i + 2]!])
      i += 2
    } else {
      ranges.push([from, from])
    }
  }
  return { kind: 'class', negated, ranges }
}

/** Whether `tokens` match all of `text`: every reachable glob position is tracked at once. */
function matchTokens(tokens: readonly Token[], text: string): boolean {
  let current = new Uint8Array(tokens.length + 1)
  let next = new Uint8Array(tokens.length + 1)
  const reach = (set: Uint8Array, at: number): void => {
    if (set[at] === 1) return
    set[at] = 1
    const token = tokens[at]
    if (token === undefined) return
    if (token.kind === 'star' || token.kind === 'globstar') reach(set, at + 1)
    else if (token.kind === 'skip') {
      reach(set, at + 1)
      reach(set, at + token.skip)
    }
  }
  reach(current, 0)
  for (let position = 0; position < text.length; position++) {
    const c = text[position]!
    next.fill(0)
    let alive = false
    for (let at = 0; at < tokens.length; at++) {
      if (current[at] !== 1) continue
      const token = tokens[at]!
      let to = -1
      switch (token.kind) {
        case 'char':
          if (c === token.char) to = at + 1
          break
        case 'one':
          if (c !== '/') to = at + 1
          break
        case 'class':
          if (c !== '/' && inClass(token, c)) to = at + 1
          break
        case 'star':
          if (c !== '/') to = at
          break
        case 'globstar':
          to = at
          break
        case 'skip':
          break
      }
      if (to >= 0) {
        reach(next, to)
        alive = true
      }
    }
    if (!alive) return false
    ;[current, next] = [next, current]
  }
  return current[tokens.length] === 1
}

function inClass(token: Extract<Token, { kind: 'class' }>, c: string): boolean {
  let inside = false
  for (const [from, to] of token.ranges) {
    if (c >= from && c <= to) {
      inside = true
      break
    }
  }
  return inside !== token.negated
}
