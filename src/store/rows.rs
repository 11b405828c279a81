//! Rows read into structs by column name: what sqlx's `FromRow` derive
//! writes, as a `macro_rules!`. The derive needs sqlx-macros, which builds
//! sqlx's drivers (and SQLite's C source) a second time for the compiler's
//! host: about a minute of a fresh test build on two cores.

/// `sqlx::FromRow` over `Any` rows for a struct whose fields are named as
/// their columns: `from_row!(Row { id, name, paired as Flag })`. A field
/// written `as T` is read as a `T` and converted with `From` (a flag is
/// stored as an integer, see [`crate::store::ids::Flag`]). A field left out
/// or misspelled is a compile error, as in any struct literal.
macro_rules! from_row {
    ($row:ident { $($field:ident $(as $via:ty)?),* $(,)? }) => {
        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $row {
            fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
                use sqlx::Row as _;
                Ok($row { $($field: $crate::store::rows::column!(row, $field $(, $via)?)),* })
            }
        }
    };
}

macro_rules! column {
    ($row:ident, $field:ident) => {
        $row.try_get(stringify!($field))?
    };
    ($row:ident, $field:ident, $via:ty) => {
        $row.try_get::<$via, _>(stringify!($field))?.into()
    };
}

pub(crate) use {column, from_row};
