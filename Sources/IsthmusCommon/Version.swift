/// The version of Isthmus, printed by `isthmus --version`.
public enum IsthmusVersion {
    public static let string = "0.1.0"
}
