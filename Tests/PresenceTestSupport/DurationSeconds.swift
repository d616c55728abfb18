/// A duration as the seconds Foundation and Dispatch take (`TimeInterval`, `DispatchTime + Double`).
extension Duration {
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
