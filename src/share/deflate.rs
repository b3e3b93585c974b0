//! Raw deflate with a preset dictionary, on top of `miniz_oxide`.
//!
//! The compressor first feeds the dictionary and sync-flushes (so its output
//! ends on a byte boundary), then compresses the payload; only the bytes
//! after the flush are kept. They form a complete raw deflate stream whose
//! back-references may reach into the dictionary. The decompressor pre-fills
//! its (non-wrapping) output buffer with the dictionary and inflates after
//! it, with a hard cap on the output size.

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress, create_comp_flags_from_zip_params,
};
use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, decompress_with_limit, inflate_flags};

/// Why compressed data does not inflate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    /// The output would be larger than the cap.
    #[error("the decompressed data is larger than {0} bytes")]
    TooLarge(usize),
    /// Not valid deflate data, or cut short.
    #[error("the compressed data is damaged ({0})")]
    Damaged(String),
}

/// Compresses `data` as raw deflate against `dict` (maximum effort).
pub fn deflate(dict: &[u8], data: &[u8]) -> Vec<u8> {
    // Level 10 ("uber"), raw deflate (negative window bits), default strategy.
    let flags = create_comp_flags_from_zip_params(10, -15, 0);
    let mut compressor = CompressorOxide::new(flags);
    let mut prefix = vec![0u8; dict.len() + dict.len() / 8 + 64];
    let (_, read, _) = compress(&mut compressor, dict, &mut prefix, TDEFLFlush::Sync);
    debug_assert_eq!(read, dict.len());
    let mut out = vec![0u8; data.len() + data.len() / 8 + 64];
    let mut in_pos = 0;
    let mut out_pos = 0;
    loop {
        let (status, read, written) = compress(
            &mut compressor,
            &data[in_pos..],
            &mut out[out_pos..],
            TDEFLFlush::Finish,
        );
        in_pos += read;
        out_pos += written;
        match status {
            TDEFLStatus::Okay if out_pos == out.len() => {
                let grow = out.len() + 64;
                out.resize(out.len() + grow, 0);
            }
            TDEFLStatus::Okay => {}
            _ => break,
        }
    }
    out.truncate(out_pos);
    out
}

/// Inflates raw deflate `data` compressed against `dict`, refusing to
/// produce more than `limit` bytes.
pub fn inflate(dict: &[u8], data: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let mut decompressor = DecompressorOxide::new();
    // Room for one byte past the limit tells "exactly at the limit" from "over".
    let mut out = vec![0u8; dict.len() + limit + 1];
    out[..dict.len()].copy_from_slice(dict);
    let (status, _, written) = decompress_with_limit(
        &mut decompressor,
        data,
        &mut out,
        dict.len(),
        usize::MAX,
        inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
    );
    match status {
        TINFLStatus::Done if written <= limit => {
            out.truncate(dict.len() + written);
            out.drain(..dict.len());
            Ok(out)
        }
        TINFLStatus::Done | TINFLStatus::HasMoreOutput => Err(InflateError::TooLarge(limit)),
        TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
            Err(InflateError::Damaged("cut short".into()))
        }
        other => Err(InflateError::Damaged(format!("{other:?}").to_lowercase())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_and_without_dictionary() {
        let dict = b"the alloc is reconnecting to the node";
        let data = b"the node is reconnecting; the alloc is reconnecting too";
        for d in [&dict[..], &[][..]] {
            let packed = deflate(d, data);
            assert_eq!(inflate(d, &packed, 1 << 20).as_deref(), Ok(&data[..]));
        }
        assert!(deflate(dict, data).len() < deflate(&[], data).len());
    }

    #[test]
    fn caps_the_output() {
        let data = vec![b'a'; 10_000];
        let packed = deflate(&[], &data);
        assert_eq!(
            inflate(&[], &packed, 9_999),
            Err(InflateError::TooLarge(9_999))
        );
        assert_eq!(inflate(&[], &packed, 10_000).map(|v| v.len()), Ok(10_000));
    }

    #[test]
    fn damaged_data_is_an_error() {
        let packed = deflate(&[], b"hello hello hello");
        assert!(inflate(&[], &packed[..packed.len() / 2], 100).is_err());
        assert!(inflate(&[], &[0xff, 0xff, 0xff], 100).is_err());
    }
}
