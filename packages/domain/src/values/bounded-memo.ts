/**
 * Remembers the answers of a pure function for hot, repeating keys. Bounded: past `limit` entries it starts over,
 * so hostile input cannot grow it. A key whose computation throws is not remembered.
 */
export const boundedMemo = <K, V>(limit: number, compute: (key: K) => V): ((key: K) => V) => {
  const answers = new Map<K, V>()
  return (key) => {
    let answer = answers.get(key)
    if (answer === undefined) {
      answer = compute(key)
      if (answers.size >= limit) answers.clear()
      answers.set(key, answer)
    }
    return answer
  }
}
