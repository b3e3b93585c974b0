//! A port of lz-string's `compressToEncodedURIComponent` (pieroxy/lz-string,
//! MIT/WTFPL), used only to compare link lengths with the TypeScript
//! Playground's codec (`tests/share_links.rs`, `benches/links.rs` include
//! this file). It works on UTF-16 code units, as the JavaScript original.

#![allow(dead_code)]

use std::collections::BTreeMap;

const URI_ALPHABET: &[u8; 65] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$";

struct BitWriter {
    out: String,
    value: u32,
    position: u32,
    bits: u32,
}

impl BitWriter {
    fn put(&mut self, mut v: u32, n: u32) {
        for _ in 0..n {
            self.value = (self.value << 1) | (v & 1);
            v >>= 1;
            if self.position == self.bits - 1 {
                self.position = 0;
                self.out.push(char::from(URI_ALPHABET[self.value as usize]));
                self.value = 0;
            } else {
                self.position += 1;
            }
        }
    }
}

/// `LZString.compressToEncodedURIComponent(text)`.
pub fn compress_to_encoded_uri_component(text: &str) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut dict: BTreeMap<Vec<u16>, u32> = BTreeMap::new();
    let mut to_create: std::collections::BTreeSet<Vec<u16>> = Default::default();
    let mut w: Vec<u16> = Vec::new();
    let mut enlarge_in: u32 = 2;
    let mut dict_size: u32 = 3;
    let mut num_bits: u32 = 2;
    let mut writer = BitWriter {
        out: String::new(),
        value: 0,
        position: 0,
        bits: 6,
    };
    let emit = |w: &Vec<u16>,
                writer: &mut BitWriter,
                dict: &BTreeMap<Vec<u16>, u32>,
                to_create: &mut std::collections::BTreeSet<Vec<u16>>,
                enlarge_in: &mut u32,
                num_bits: &mut u32| {
        if to_create.contains(w) {
            let c = u32::from(w[0]);
            if c < 256 {
                writer.put(0, *num_bits);
                writer.put(c, 8);
            } else {
                writer.put(1, *num_bits);
                writer.put(c, 16);
            }
            *enlarge_in -= 1;
            if *enlarge_in == 0 {
                *enlarge_in = 1 << *num_bits;
                *num_bits += 1;
            }
            to_create.remove(w);
        } else {
            writer.put(dict[w], *num_bits);
        }
        *enlarge_in -= 1;
        if *enlarge_in == 0 {
            *enlarge_in = 1 << *num_bits;
            *num_bits += 1;
        }
    };
    for &c in &units {
        let single = vec![c];
        if !dict.contains_key(&single) {
            dict.insert(single.clone(), dict_size);
            dict_size += 1;
            to_create.insert(single);
        }
        let mut wc = w.clone();
        wc.push(c);
        if dict.contains_key(&wc) {
            w = wc;
        } else {
            emit(
                &w,
                &mut writer,
                &dict,
                &mut to_create,
                &mut enlarge_in,
                &mut num_bits,
            );
            dict.insert(wc, dict_size);
            dict_size += 1;
            w = vec![c];
        }
    }
    if !w.is_empty() {
        emit(
            &w,
            &mut writer,
            &dict,
            &mut to_create,
            &mut enlarge_in,
            &mut num_bits,
        );
    }
    writer.put(2, num_bits);
    loop {
        writer.value <<= 1;
        if writer.position == writer.bits - 1 {
            writer
                .out
                .push(char::from(URI_ALPHABET[writer.value as usize]));
            break;
        }
        writer.position += 1;
    }
    writer.out
}

#[test]
fn matches_the_npm_package() {
    // Outputs of lz-string 1.5.0 under Node.js.
    assert_eq!(
        compress_to_encoded_uri_component("Hello, world"),
        "BIUwNmD2A0AEDukBOYAmQ"
    );
    assert_eq!(
        compress_to_encoded_uri_component("aaaaaaaaaaaaaaaaaaaabababababé€😀"),
        "IY1-gRs2zCXgagkLwbgAPaA"
    );
}
