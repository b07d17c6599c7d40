/// `vector` scaled to unit length, so that dot products are cosine similarities; an all-zero vector
/// has no direction and is returned as it is.
func unitLength(_ vector: [Float]) -> [Float] {
    let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
    return norm > 0 ? vector.map { $0 / norm } : vector
}
