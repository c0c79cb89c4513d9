import { Effect, HashMap, Option, Ref } from "effect"
import { PlanEntries } from "@accord/domain"
import type { MemoryState } from "./state.js"

export const makePlanEntries = (state: MemoryState) =>
  PlanEntries.of({
    insertIfAbsent: (entry, events) =>
      Ref.modify(state.planEntries, (entries) => {
        if (HashMap.has(entries, entry.emailKey)) return [false, entries]
        state.events.append(events)
        return [true, HashMap.set(entries, entry.emailKey, entry)]
      }),
    findByEmailKey: (emailKey) =>
      Effect.map(Ref.get(state.planEntries), (entries) => Option.getOrUndefined(HashMap.get(entries, emailKey)))
  })
