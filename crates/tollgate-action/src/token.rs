//! The API token, unprintable by construction: `Debug` and `Display` show `***`, and the only
//! way to the secret is [`Token::expose`], called where the `Authorization` header is built.

use std::fmt;

#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// `None` for a missing or blank token.
    pub fn new(secret: Option<String>) -> Option<Token> {
        secret
            .map(|secret| secret.trim().to_string())
            .filter(|secret| !secret.is_empty())
            .map(Token)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_secret() {
        let token = Token::new(Some(" ghs_secret ".into())).unwrap();
        assert_eq!(format!("{token}"), "***");
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert_eq!(format!("{:?}", Some(token.clone())), "Some(Token(***))");
        assert_eq!(token.expose(), "ghs_secret");
        assert!(Token::new(Some("  ".into())).is_none());
        assert!(Token::new(None).is_none());
    }
}
