//! Bearer tokens: who may call the server, and the name each caller has in its logs.
//!
//! A token file holds one client per line, `NAME TOKEN` (blank lines and lines starting
//! with `#` aside): the name is what the logs and `boost_models()` call the client, the token
//! what it sends as `authorization: Bearer TOKEN` on every call. A call without a token, or
//! with one the file does not hold, is refused with `Unauthenticated` before it reaches any
//! model. Tokens are compared in constant time; none is ever logged.

use std::path::Path;
use std::sync::Arc;

use subtle::ConstantTimeEq;
use tonic::{Request, Status};

use crate::{Error, Result};

/// The caller of a request, as the interceptor found it (a request extension).
#[derive(Debug, Clone)]
pub struct Client(pub Arc<str>);

impl Client {
    /// The caller of `request` (`anonymous` where the server checks no token).
    pub fn of<T>(request: &Request<T>) -> Client {
        request
            .extensions()
            .get::<Client>()
            .cloned()
            .unwrap_or_else(|| Client(Arc::from("anonymous")))
    }
}

/// The clients a server accepts, by token.
#[derive(Clone)]
pub struct Tokens {
    clients: Arc<[(Arc<str>, Vec<u8>)]>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.clients.iter().map(|(name, _)| &**name).collect();
        f.debug_struct("Tokens").field("clients", &names).finish()
    }
}

impl Tokens {
    /// The clients of the token file at `path`.
    pub fn read(path: &Path) -> Result<Tokens> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Tokens::parse(&text).map_err(|message| Error::Format {
            file: path.to_path_buf(),
            message,
        })
    }

    /// The clients of a token file's text.
    pub fn parse(text: &str) -> std::result::Result<Tokens, String> {
        let mut clients: Vec<(Arc<str>, Vec<u8>)> = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(name), Some(token), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!("line {}: expected `NAME TOKEN`", number + 1));
            };
            if token.len() < 16 {
                return Err(format!(
                    "line {}: client `{name}`'s token has {} characters; at least 16 are needed",
                    number + 1,
                    token.len()
                ));
            }
            if clients.iter().any(|(other, _)| &**other == name) {
                return Err(format!(
                    "line {}: client `{name}` is named twice",
                    number + 1
                ));
            }
            if clients.iter().any(|(_, other)| other == token.as_bytes()) {
                return Err(format!(
                    "line {}: client `{name}`'s token is another's",
                    number + 1
                ));
            }
            clients.push((Arc::from(name), token.as_bytes().to_vec()));
        }
        if clients.is_empty() {
            return Err("no client: one `NAME TOKEN` per line".into());
        }
        Ok(Tokens {
            clients: clients.into(),
        })
    }

    /// The client whose token `token` is.
    fn client(&self, token: &[u8]) -> Option<&Arc<str>> {
        // Every token is compared, found or not: the time does not tell which matched.
        let mut found = None;
        for (name, known) in self.clients.iter() {
            if bool::from(known.as_slice().ct_eq(token)) {
                found = Some(name);
            }
        }
        found
    }

    /// The check of every call: the caller's token names a client, which the request then
    /// carries ([`Client`]); else `Unauthenticated`.
    pub fn check(&self, mut request: Request<()>) -> std::result::Result<Request<()>, Status> {
        let header = request
            .metadata()
            .get("authorization")
            .ok_or_else(|| Status::unauthenticated("no `authorization: Bearer …` header"))?;
        let token = header
            .as_bytes()
            .strip_prefix(b"Bearer ")
            .ok_or_else(|| Status::unauthenticated("the authorization is not `Bearer …`"))?;
        let name = self
            .client(token)
            .ok_or_else(|| Status::unauthenticated("unknown token"))?
            .clone();
        request.extensions_mut().insert(Client(name));
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# clients\nalice 0123456789abcdef0123\n\nbob fedcba9876543210fedc\n";

    fn with_header(value: Option<&str>) -> Request<()> {
        let mut request = Request::new(());
        if let Some(value) = value {
            request
                .metadata_mut()
                .insert("authorization", value.parse().unwrap());
        }
        request
    }

    #[test]
    fn a_known_token_names_its_client_and_others_are_refused() {
        let tokens = Tokens::parse(FILE).unwrap();
        let request = tokens
            .check(with_header(Some("Bearer fedcba9876543210fedc")))
            .unwrap();
        assert_eq!(&*Client::of(&request).0, "bob");
        for refused in [
            None,
            Some("Bearer 0123456789abcdef012"),
            Some("Bearer "),
            Some("Basic 0123456789abcdef0123"),
            Some("bearer 0123456789abcdef0123"),
        ] {
            let status = tokens.check(with_header(refused)).unwrap_err();
            assert_eq!(status.code(), tonic::Code::Unauthenticated, "{refused:?}");
        }
    }

    #[test]
    fn a_bad_token_file_is_refused_naming_its_line() {
        for (text, says) in [
            ("", "no client"),
            ("alice\n", "line 1"),
            ("alice short\n", "at least 16"),
            ("a 0123456789abcdef\na 0123456789abcdeg\n", "named twice"),
            ("a 0123456789abcdef\nb 0123456789abcdef\n", "another's"),
            ("a 0123456789abcdef extra\n", "NAME TOKEN"),
        ] {
            let error = Tokens::parse(text).unwrap_err();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn tokens_are_not_shown() {
        let tokens = Tokens::parse(FILE).unwrap();
        let shown = format!("{tokens:?}");
        assert!(shown.contains("alice") && !shown.contains("0123456789"));
    }
}
