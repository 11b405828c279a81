//! The typed ids (`domain::ids`) as database integers, so a query binds and
//! reads them like the `i64` they wrap. Here, not in the domain, which
//! names no framework.
use crate::domain::ids::{BundleId, DatasetId, InstanceId, ParticipantId, StudyId, TaskId, UserId};
use sqlx::any::{Any, AnyTypeInfo, AnyValueRef};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Decode, Encode, Type};

macro_rules! sqlite_id {
    ($($name:ident),*) => {$(
        impl Type<Any> for $name {
            fn type_info() -> AnyTypeInfo {
                <i64 as Type<Any>>::type_info()
            }
            fn compatible(ty: &AnyTypeInfo) -> bool {
                <i64 as Type<Any>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Any> for $name {
            fn encode_by_ref(&self, buf: &mut <Any as sqlx::Database>::ArgumentBuffer<'q>) -> Result<IsNull, BoxDynError> {
                <i64 as Encode<'q, Any>>::encode(self.get(), buf)
            }
        }

        impl<'r> Decode<'r, Any> for $name {
            fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                <i64 as Decode<'r, Any>>::decode(value).map($name::new)
            }
        }
    )*};
}

sqlite_id!(StudyId, TaskId, InstanceId, ParticipantId, BundleId, DatasetId, UserId);

/// A yes/no column. Both schemas store flags as integers 0/1, and sqlx's
/// `Any` reads a `bool` only from a boolean value, so flags are read as this
/// (`field as Flag` in a row's `store::rows::from_row!`) and bound as `i64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(f: Flag) -> bool {
        f.0
    }
}

impl Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }
    fn compatible(_: &AnyTypeInfo) -> bool {
        true
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        match <i64 as Decode<'r, Any>>::decode(value.clone()) {
            Ok(i) => Ok(Flag(i != 0)),
            Err(_) => <bool as Decode<'r, Any>>::decode(value).map(Flag),
        }
    }
}
