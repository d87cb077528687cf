extension String {
    /// Without leading and trailing whitespace (`Character.isWhitespace`, newlines included), without copying.
    var trimmedOfWhitespace: Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
