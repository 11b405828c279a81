//! Where SQLite and PostgreSQL SQL differ. Nearly every statement is written
//! once in the SQL both share (`$N` parameters, `ON CONFLICT`, `CASE`); the
//! exceptions are SQLite's JSON functions, which batch many rows into one
//! parameter or one result, and have no common spelling:
//! - [`Sql`] holds a statement's two texts and picks one for the backend a
//!   query runs on (the features' are named in `store::statements`);
//! - [`pages`] rewrites a page query (`crate::store::pages`) mechanically.
use sqlx::{AnyConnection, AnyPool};
use std::borrow::Cow;

/// What a statement runs on.
pub trait Backend {
    fn is_postgres(&self) -> bool;
}

impl Backend for AnyPool {
    fn is_postgres(&self) -> bool {
        matches!(self.connect_options().database_url.scheme(), "postgres" | "postgresql")
    }
}

impl Backend for AnyConnection {
    fn is_postgres(&self) -> bool {
        self.backend_name() == "PostgreSQL"
    }
}

impl<B: Backend + ?Sized> Backend for &B {
    fn is_postgres(&self) -> bool {
        (**self).is_postgres()
    }
}

impl<B: Backend + ?Sized> Backend for &mut B {
    fn is_postgres(&self) -> bool {
        (**self).is_postgres()
    }
}

/// A statement whose SQL differs between the backends, with both texts.
/// `on` picks the one for the pool or connection it runs on, so the code
/// that runs it writes one query and never asks which database it is. The
/// ones features run are named in [`super::statements`];
/// `scripts/pg-sql-check.py` prepares every `postgres:` text (each must be a
/// whole statement) and skips the `sqlite:` ones.
#[derive(Debug, Clone, Copy)]
pub struct Sql {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

impl Sql {
    /// The text for the backend `on` (a pool or a connection) runs on.
    pub fn on<B: Backend + ?Sized>(&self, on: &B) -> &'static str {
        if on.is_postgres() {
            self.postgres
        } else {
            self.sqlite
        }
    }
}

/// A page query for `on`. SQLite's form packs rows as
/// `json_group_array(json_array(…))` and may read a JSON list of integer
/// keys as `json_each($N) j` (`j.value`); on PostgreSQL they become
/// `json_agg(json_build_array(…))::text` (NULL for no rows, as the pages
/// expect) and a subquery over `json_array_elements_text`.
pub fn pages(on: &impl Backend, sql: &'static str) -> Cow<'static, str> {
    if !on.is_postgres() {
        return Cow::Borrowed(sql);
    }
    Cow::Owned(postgres_pages(sql))
}

fn postgres_pages(sql: &str) -> String {
    const AGG: &str = "json_group_array(json_array(";
    let mut out = String::with_capacity(sql.len() + 64);
    let mut rest = sql;
    while let Some(at) = rest.find(AGG) {
        out.push_str(&rest[..at]);
        out.push_str("json_agg(json_build_array(");
        rest = &rest[at + AGG.len()..];
        // The aggregate closes where its two parentheses do.
        let mut depth = 2;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str(&rest[..end]);
        out.push_str("::text");
        rest = &rest[end..];
    }
    out.push_str(rest);
    let mut sql = out;
    while let Some(at) = sql.find("json_each($") {
        let digits: String = sql[at + 11..].chars().take_while(char::is_ascii_digit).collect();
        let call = format!("json_each(${digits})");
        let keys = format!("(SELECT value::bigint AS value FROM json_array_elements_text(${digits}::json))");
        sql = sql.replacen(&call, &keys, 1);
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::postgres_pages;

    #[test]
    fn a_page_query_becomes_postgres_json() {
        assert_eq!(
            postgres_pages("SELECT json_group_array(json_array(a.x, (SELECT t.q FROM t), a.y)) FROM a WHERE a.s = $1"),
            "SELECT json_agg(json_build_array(a.x, (SELECT t.q FROM t), a.y))::text FROM a WHERE a.s = $1"
        );
    }

    #[test]
    fn a_json_key_list_becomes_a_subquery_of_integers() {
        assert_eq!(
            postgres_pages("SELECT json_group_array(json_array(k)) FROM json_each($2) j JOIN t ON t.k = j.value"),
            "SELECT json_agg(json_build_array(k))::text FROM \
             (SELECT value::bigint AS value FROM json_array_elements_text($2::json)) j JOIN t ON t.k = j.value"
        );
    }

    #[test]
    fn other_statements_pass_unchanged() {
        assert_eq!(postgres_pages("SELECT count(*) FROM answers"), "SELECT count(*) FROM answers");
    }
}
