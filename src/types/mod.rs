//! Layer 1, types: what a request is made of. The value and index types and their keys, the strided
//! views and their validation, the errors, and what a kernel reads (a sequence) and writes (its outputs).
//! Nothing here selects anything.

pub(crate) mod data_type;
pub(crate) mod element;
pub(crate) mod error;
pub(crate) mod index;
pub(crate) mod output;
pub(crate) mod request;
pub(crate) mod sequence;
pub(crate) mod view;
