//! Setters for the settings structs, which are `#[non_exhaustive]` so that a new setting is
//! not a breaking change: outside this crate they are built from their `Default` (or `new`)
//! and these setters, never with a struct literal.

/// Writes a consuming setter named after each listed field; with `@some`, one that sets an
/// optional field to `Some` of its argument.
macro_rules! setters {
    (@some $ty:ty { $($field:ident: $fty:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!(
                    "Sets [`", stringify!($field), "`](Self::", stringify!($field), ") to `Some` of it."
                )]
                #[must_use]
                pub fn $field(mut self, $field: $fty) -> Self {
                    self.$field = Some($field);
                    self
                }
            )*
        }
    };
    ($ty:ty { $($field:ident: $fty:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!(
                    "Sets [`", stringify!($field), "`](Self::", stringify!($field),
                    "), whose documentation gives its default."
                )]
                #[must_use]
                pub fn $field(mut self, $field: $fty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}
