//! From a `postgres://` store URL to a connection configuration, with the password taken where
//! libpq takes it: `PGPASSWORD`, else a password file (the URL's `passfile=`, else `PGPASSFILE`,
//! else `~/.pgpass`). The URL itself never holds one (refused when parsed), and nothing here
//! logs or formats a password: errors name the file, never its lines.

use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres::Config;
use postgres::config::Host;

use super::super::{PostgresUrl, StoreError};

/// How long opening a connection may take before the store is reported unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection configuration of `url`, password included when one is found.
pub(super) fn config(url: &PostgresUrl) -> Result<Config, StoreError> {
    config_with(url, &|name| std::env::var(name).ok())
}

fn config_with(
    url: &PostgresUrl,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, StoreError> {
    let (base, passfile) = split_passfile(url.as_str());
    let mut config: Config =
        base.parse()
            .map_err(|err: postgres::Error| StoreError::PostgresConfig {
                reason: err.to_string(),
            })?;
    if config.get_user().is_none()
        && let Some(user) = env("PGUSER").or_else(|| env("USER"))
    {
        config.user(&user);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("tollgate");
    }
    if let Some(password) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(password);
        return Ok(config);
    }
    let file = passfile
        .map(PathBuf::from)
        .or_else(|| env("PGPASSFILE").map(PathBuf::from))
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".pgpass")));
    if let Some(file) = file
        && let Some(password) = from_passfile(&file, &config)?
    {
        config.password(password);
    }
    Ok(config)
}

/// The URL without its `passfile=` parameter (the driver does not know it), and that parameter.
fn split_passfile(url: &str) -> (String, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut passfile = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| match pair.split_once('=') {
            Some((key, value)) if key.eq_ignore_ascii_case("passfile") => {
                passfile = Some(percent_decode(value));
                false
            }
            _ => !pair.is_empty(),
        })
        .collect();
    if kept.is_empty() {
        (base.to_string(), passfile)
    } else {
        (format!("{base}?{}", kept.join("&")), passfile)
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The password of the first line of the password file `file` that matches the connection
/// (`host:port:database:user:password`, `*` matching anything, `\` escaping `:` and `\`). A
/// missing file is no password; a file others may read is ignored, as libpq does.
fn from_passfile(file: &Path, config: &Config) -> Result<Option<String>, StoreError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(StoreError::Passfile {
                path: file.to_path_buf(),
                reason: err.to_string(),
            });
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(file)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(
                path = %file.display(),
                "the password file is readable by others (it must be mode 0600 or less): ignored"
            );
            return Ok(None);
        }
    }
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(Host::Unix(_)) => "localhost".to_string(),
        None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let dbname = config
        .get_dbname()
        .map_or_else(|| user.clone(), str::to_string);
    let wanted = [host.as_str(), port.as_str(), dbname.as_str(), user.as_str()];
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let fields = passfile_fields(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(wanted)
            .all(|(field, want)| field == "*" || field == want)
        {
            return Ok(Some(fields[4..].join(":")));
        }
    }
    Ok(None)
}

/// A password file line's fields, unescaped.
fn passfile_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            other => {
                if let Some(field) = fields.last_mut() {
                    field.push(other);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> PostgresUrl {
        match text.parse().unwrap() {
            crate::store::StoreUrl::Postgres(url) => url,
            other => panic!("not postgres: {other}"),
        }
    }

    #[test]
    fn the_password_comes_from_pgpassword_first() {
        let env = |name: &str| match name {
            "PGPASSWORD" => Some("from-env".to_string()),
            "USER" => Some("me".to_string()),
            _ => None,
        };
        let config = config_with(&url("postgres://db.internal:5433/reviews"), &env).unwrap();
        assert_eq!(config.get_password(), Some(&b"from-env"[..]));
        assert_eq!(config.get_user(), Some("me"));
        assert_eq!(config.get_dbname(), Some("reviews"));
    }

    #[test]
    fn a_passfile_line_matching_the_connection_gives_the_password() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5433:reviews:tg:wrong\ndb.internal:5433:reviews:tg:pa\\:ss:word\n*:*:*:*:fallback\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let text = format!(
            "postgres://tg@db.internal:5433/reviews?passfile={}&sslmode=disable",
            file.display()
        );
        let none = |_: &str| None;
        let config = config_with(&url(&text), &none).unwrap();
        assert_eq!(config.get_password(), Some(&b"pa:ss:word"[..]));
        // PGPASSFILE is read when the URL names none; the wildcard line matches another host.
        let env = |name: &str| (name == "PGPASSFILE").then(|| file.display().to_string());
        let config = config_with(&url("postgres://tg@elsewhere/x"), &env).unwrap();
        assert_eq!(config.get_password(), Some(&b"fallback"[..]));
        // A file others may read is ignored.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            let config = config_with(&url("postgres://tg@elsewhere/x"), &env).unwrap();
            assert_eq!(config.get_password(), None);
        }
    }

    #[test]
    fn the_passfile_parameter_is_removed_from_the_driver_url() {
        assert_eq!(
            split_passfile("postgres://h/db?passfile=%2Frun%2Fpg&sslmode=disable"),
            (
                "postgres://h/db?sslmode=disable".to_string(),
                Some("/run/pg".to_string())
            )
        );
        assert_eq!(
            split_passfile("postgres://h/db?passfile=/p"),
            ("postgres://h/db".to_string(), Some("/p".to_string()))
        );
        assert_eq!(
            split_passfile("postgres://h/db"),
            ("postgres://h/db".to_string(), None)
        );
    }
}
