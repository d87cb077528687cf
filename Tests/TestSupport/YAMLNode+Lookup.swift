import IsthmusConfig

extension YAMLNode {
    /// The value of `key` when this node is a mapping; nil otherwise or when absent. Pure.
    public subscript(key: String) -> YAMLNode? {
        guard case .mapping(let entries, _) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// Element `index` when this node is a sequence and has it. Pure.
    public subscript(index: Int) -> YAMLNode? {
        guard case .sequence(let items, _) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    /// The text of a scalar node (nil for mappings, sequences and null).
    public var scalarText: String? {
        guard case .scalar(let text, _, _) = self else { return nil }
        return text
    }

    /// Whether this is an unquoted scalar (so `false` is a boolean to other YAML readers, not a string).
    public var isPlainScalar: Bool {
        guard case .scalar(_, let plain, _) = self else { return false }
        return plain
    }

    /// The number of items of a sequence (nil for other nodes).
    public var count: Int? {
        guard case .sequence(let items, _) = self else { return nil }
        return items.count
    }
}
