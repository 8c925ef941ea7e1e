//! How an entry's embedding is stored and compared: quantised to one signed byte per dimension
//! with a per-vector scale (`[scale: f32 LE][i8 × dim]`), a quarter of the f32 bytes, so the
//! exact nearest-neighbour scan reads a quarter of the data from SQLite and multiplies integers.
//! Vectors are L2-normalised, so every component is in [-1, 1] and the rounding error of a dot
//! product stays far below the gaps that order neighbours. Rows written before quantisation
//! (little-endian f32, `dim × 4` bytes) are still read: the length tells the two apart.

/// The stored form of a (normalised) vector.
pub(crate) fn encode(vector: &[f32]) -> Vec<u8> {
    let max = vector.iter().fold(0f32, |max, x| max.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let mut bytes = Vec::with_capacity(4 + vector.len());
    bytes.extend_from_slice(&scale.to_le_bytes());
    bytes.extend(
        vector
            .iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    bytes
}

/// A query vector, quantised once for every stored vector it meets.
pub(crate) struct Query {
    float: Vec<f32>,
    bytes: Vec<i8>,
    scale: f32,
}

impl Query {
    pub(crate) fn new(vector: Vec<f32>) -> Query {
        let encoded = encode(&vector);
        let scale = f32::from_le_bytes([encoded[0], encoded[1], encoded[2], encoded[3]]);
        Query {
            bytes: encoded[4..].iter().map(|b| *b as i8).collect(),
            scale,
            float: vector,
        }
    }

    /// The dot product with a stored vector (cosine similarity: both are unit vectors), or
    /// `None` when its length fits neither format for this dimension.
    pub(crate) fn similarity(&self, stored: &[u8]) -> Option<f32> {
        let dim = self.float.len();
        if stored.len() == dim + 4 {
            let scale = f32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
            // i8 × i8 summed in i32 never overflows below 130k dimensions.
            let dot: i32 = stored[4..]
                .iter()
                .zip(&self.bytes)
                .map(|(a, b)| i32::from(*a as i8) * i32::from(*b))
                .sum();
            return Some(dot as f32 * scale * self.scale);
        }
        if stored.len() == dim * 4 {
            return Some(
                stored
                    .chunks_exact(4)
                    .zip(&self.float)
                    .map(|(chunk, q)| {
                        f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) * q
                    })
                    .sum(),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        values.iter().map(|x| x / norm).collect()
    }

    #[test]
    fn quantised_similarity_is_close_to_the_exact_one_and_old_rows_still_read() {
        let a = unit(&[0.3, -0.2, 0.9, 0.05, 0.0, -0.7, 0.1, 0.4]);
        let b = unit(&[0.25, -0.1, 0.8, 0.0, 0.1, -0.6, 0.3, 0.2]);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let query = Query::new(a.clone());
        let stored = encode(&b);
        assert_eq!(stored.len(), b.len() + 4);
        let quantised = query.similarity(&stored).unwrap();
        assert!((quantised - exact).abs() < 0.01, "{quantised} vs {exact}");
        let old: Vec<u8> = b.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!((query.similarity(&old).unwrap() - exact).abs() < 1e-6);
        assert_eq!(query.similarity(&[1, 2, 3]), None);
        assert_eq!(
            Query::new(vec![0.0; 4]).similarity(&encode(&[0.0; 4])),
            Some(0.0)
        );
    }
}
