//! The typed ids (`domain::ids`) as SQLite integers, so a query binds and
//! reads them like the `i64` they wrap. Here, not in the domain, which
//! names no framework.
use crate::domain::ids::{BundleId, DatasetId, InstanceId, ParticipantId, StudyId, TaskId};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{Sqlite, SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Type};

macro_rules! sqlite_id {
    ($($name:ident),*) => {$(
        impl Type<Sqlite> for $name {
            fn type_info() -> SqliteTypeInfo {
                <i64 as Type<Sqlite>>::type_info()
            }
            fn compatible(ty: &SqliteTypeInfo) -> bool {
                <i64 as Type<Sqlite>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Sqlite> for $name {
            fn encode_by_ref(&self, buf: &mut Vec<SqliteArgumentValue<'q>>) -> Result<IsNull, BoxDynError> {
                <i64 as Encode<'q, Sqlite>>::encode(self.get(), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $name {
            fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
                <i64 as Decode<'r, Sqlite>>::decode(value).map($name::new)
            }
        }
    )*};
}

sqlite_id!(StudyId, TaskId, InstanceId, ParticipantId, BundleId, DatasetId);
