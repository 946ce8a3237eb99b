extension JSONWriter {
    /// A decision's tag hits, each with its members sorted (`reason`, `tag`, `weight`): the risk
    /// query's answer and the decision's stored tags column are written alike.
    @inlinable public mutating func tagHits(_ tags: [TagHit]) {
        array(tags) { json, hit in
            json.object { json in
                json.key("reason")
                json.string(hit.reason)
                json.key("tag")
                json.string(hit.tag)
                json.key("weight")
                json.integer(hit.weight)
            }
        }
    }
}
