//! FNV-1a, 64 bits: the hashes the controller writes on objects (a NodePool's template, a
//! MachineDeployment's `spec.template`) must stay the same across library and toolchain updates,
//! so they use this fixed function rather than `std`'s hashers.

/// The running hash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv1a(u64);

impl Fnv1a {
    /// The hash of nothing (the offset basis).
    pub(crate) fn new() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    /// `bytes` hashed in.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// `text` hashed in, then a separator byte no UTF-8 text contains (0xff), so the fields
    /// ("ab", "c") and ("a", "bc") hash differently.
    pub(crate) fn field(&mut self, text: &str) {
        self.write(text.as_bytes());
        self.write(&[0xff]);
    }

    /// The hash so far.
    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// The hash of `text`, as 16 hex digits.
pub(crate) fn hex(text: &str) -> String {
    let mut h = Fnv1a::new();
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published FNV-1a 64 test vectors: the function is the standard one.
    #[test]
    fn standard_vectors() {
        assert_eq!(hex(""), "cbf29ce484222325");
        assert_eq!(hex("a"), "af63dc4c8601ec8c");
        assert_eq!(hex("foobar"), "85944171f73967e8");
    }

    /// A field is its text and the separator byte, so splitting text between fields matters.
    #[test]
    fn fields_are_separated() {
        let mut one = Fnv1a::new();
        one.field("ab");
        one.field("c");
        let mut two = Fnv1a::new();
        two.field("a");
        two.field("bc");
        assert_ne!(one.finish(), two.finish());
        let mut bytes = Fnv1a::new();
        bytes.write(b"ab\xffc\xff");
        assert_eq!(one.finish(), bytes.finish());
    }
}
