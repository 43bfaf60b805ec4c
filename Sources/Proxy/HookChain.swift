/// Runs one message part through an exchange's hooks in order: each
/// `.forward` of a hook is the input of the next; any other output ends that
/// part's way and is returned as is.
enum HookChain {
    static func run<Part>(_ part: Part, through hooks: ArraySlice<any ExchangeHook>,
                          _ call: (any ExchangeHook, Part) -> [HookOutput<Part>]) -> [HookOutput<Part>] {
        guard let first = hooks.first else { return [.forward(part)] }
        let firstOutputs = call(first, part)
        let rest = hooks.dropFirst()
        // The last hook's outputs are the chain's: returned as they are, with
        // no array built per part (the usual chain is one hook, per body chunk).
        guard !rest.isEmpty else { return firstOutputs }
        var outputs: [HookOutput<Part>] = []
        for output in firstOutputs {
            if case .forward(let next) = output {
                outputs += run(next, through: rest, call)
            } else {
                outputs.append(output)
            }
        }
        return outputs
    }
}
