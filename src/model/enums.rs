//! String-valued statuses of Nomad's API as enums that never reject a value.
//!
//! Each enum has the values this project knows and an `Other(String)`
//! variant that keeps any other text verbatim, so JSON from another Nomad
//! version reads without error and writes back unchanged. `Default` is
//! `Other("")`, Go's zero value for a string.

/// Defines a string enum with an `Other(String)` fallback and its serde.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this project does not know (or Go's empty string), kept verbatim.
            Other(String),
        }

        impl $name {
            /// The API's text for this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )*
                    $name::Other(text) => text.as_str(),
                }
            }

            /// Reads the API's text; unknown text becomes `Other`.
            pub fn parse(text: &str) -> Self {
                match text {
                    $( $text => $name::$variant, )*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::Other(String::new())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            /// A string; `null` reads as Go's empty string.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text: Option<String> = serde::Deserialize::deserialize(d)?;
                Ok($name::parse(text.as_deref().unwrap_or("")))
            }
        }
    };
}

pub(crate) use string_enum;
