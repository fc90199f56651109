//! The checks every 9P request passes before the `p9` server sees it: path confinement, the
//! read-only policy and ownership.
//!
//! The `p9` crate (crosvm's server) was written to run inside a jail (a mount namespace whose
//! root is the shared directory), so it trusts the names a client sends: a walk to `..` from the
//! root, or a name such as `a/../../etc` or `link/file` (which `openat` resolves component by
//! component, following symlinks in the middle), would leave the shared directory. rv32vm runs
//! the server without a jail, so this filter refuses, in every request that carries a name
//! (walk, create, mkdir, mknod, symlink, link, rename, renameat, unlinkat, xattr), any name
//! that is empty, `.`, `..`, or contains `/`.
//!
//! With single-component names the server's own rules confine it: each walk step is
//! `openat(parent, name, O_PATH | O_NOFOLLOW)` relative to the parent's open descriptor, so a
//! symlink is never followed on the host (the guest reads it with `readlink` and resolves it in
//! its own namespace), and a directory or symlink swapped in during a walk cannot redirect a
//! step that already holds its parent open. Opening a fid goes through `/proc/self/fd`, which
//! reopens the very inode the fid holds (a symlink fid fails with `ELOOP`). Every fid therefore
//! stays inside the shared tree, and so do hard links (`linkat` of a fid) and renames (both
//! directories are fids).
//!
//! Policy, on top of confinement:
//! - read-only shares refuse every request that would change the tree or a file (`lcreate`,
//!   `symlink`, `mknod`, `rename`, `renameat`, `unlinkat`, `remove`, `mkdir`, `link`,
//!   `setattr`, `xattrcreate`, `write`, and `lopen` for writing, truncating, creating or
//!   appending) with `EROFS`;
//! - files belong to the host user running rv32vm: `setattr` requests to change the owner or
//!   group are accepted and ignored (so `cp -a` or `tar` as guest root do not fail), and the
//!   set-user-ID and set-group-ID bits are removed from the modes of created files and from
//!   `chmod` (a guest must not leave set-ID programs of the host user behind);
//! - `lopen` always adds `O_NONBLOCK`, so opening a FIFO that the host placed in the directory
//!   cannot block the device's thread (regular files ignore the flag).

/// 9P message types (Linux `include/net/9p/9p.h`).
pub(crate) mod msg {
    /// Error reply (9P2000.L).
    pub const RLERROR: u8 = 7;
    /// Open a fid.
    pub const TLOPEN: u8 = 12;
    /// Create and open a file in a directory fid.
    pub const TLCREATE: u8 = 14;
    /// Create a symlink.
    pub const TSYMLINK: u8 = 16;
    /// Create a device node or FIFO.
    pub const TMKNOD: u8 = 18;
    /// Rename a fid into a directory.
    pub const TRENAME: u8 = 20;
    /// Change attributes.
    pub const TSETATTR: u8 = 26;
    /// Open an extended attribute for reading.
    pub const TXATTRWALK: u8 = 30;
    /// Create an extended attribute.
    pub const TXATTRCREATE: u8 = 32;
    /// Create a hard link.
    pub const TLINK: u8 = 70;
    /// Create a directory.
    pub const TMKDIR: u8 = 72;
    /// Rename by directory fids and names.
    pub const TRENAMEAT: u8 = 74;
    /// Remove a name from a directory fid.
    pub const TUNLINKAT: u8 = 76;
    /// Walk names from a fid.
    pub const TWALK: u8 = 110;
    /// Write to an open fid.
    pub const TWRITE: u8 = 118;
    /// Remove the file a fid names.
    pub const TREMOVE: u8 = 122;
}

/// Size of a 9P header: size[4] type[1] tag[2].
pub(crate) const HEADER_LEN: usize = 7;

/// `Tlopen` access mode bits (O_ACCMODE).
const P9_ACCMODE: u32 = 0o3;
/// `Tlopen`/`Tlcreate` flags as Linux sends them.
const P9_CREATE: u32 = 0o100;
const P9_TRUNC: u32 = 0o1000;
const P9_APPEND: u32 = 0o2000;
const P9_NONBLOCK: u32 = 0o4000;
/// `Tsetattr` valid bits.
const P9_SETATTR_MODE: u32 = 0x1;
const P9_SETATTR_UID: u32 = 0x2;
const P9_SETATTR_GID: u32 = 0x4;
/// Mode bits a guest may not set on the host.
const SET_ID_BITS: u32 = 0o6000;

/// The header of a 9P message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The size field (whole message, header included).
    pub size: u32,
    /// The message type.
    pub kind: u8,
    /// The tag the reply must carry.
    pub tag: u16,
}

impl Header {
    /// Parses the header at the start of `message`; `None` if it is shorter than a header.
    pub(crate) fn parse(message: &[u8]) -> Option<Self> {
        let bytes = message.get(..HEADER_LEN)?;
        Some(Self {
            size: u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            kind: bytes[4],
            tag: u16::from_le_bytes([bytes[5], bytes[6]]),
        })
    }
}

/// An `Rlerror` reply carrying `errno` for `tag`.
pub(crate) fn error_reply(tag: u16, errno: i32) -> [u8; 11] {
    let mut reply = [0u8; 11];
    reply[..4].copy_from_slice(&11u32.to_le_bytes());
    reply[4] = msg::RLERROR;
    reply[5..7].copy_from_slice(&tag.to_le_bytes());
    reply[7..].copy_from_slice(&(errno as u32).to_le_bytes());
    reply
}

/// A cursor over a message body; every read is bounds-checked.
struct Fields<'a> {
    message: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn new(message: &'a [u8]) -> Self {
        Self {
            message,
            at: HEADER_LEN,
        }
    }

    /// Skips `len` bytes, returning their offset.
    fn skip(&mut self, len: usize) -> Option<usize> {
        let start = self.at;
        let end = start.checked_add(len)?;
        if end > self.message.len() {
            return None;
        }
        self.at = end;
        Some(start)
    }

    fn u32(&mut self) -> Option<(usize, u32)> {
        let at = self.skip(4)?;
        let bytes = &self.message[at..at + 4];
        Some((
            at,
            u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        ))
    }

    fn u16(&mut self) -> Option<u16> {
        let at = self.skip(2)?;
        Some(u16::from_le_bytes([self.message[at], self.message[at + 1]]))
    }

    /// A string: len[2] bytes[len].
    fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::from(self.u16()?);
        let at = self.skip(len)?;
        Some(&self.message[at..at + len])
    }
}

/// Whether `name` is one path component that stays in its directory.
pub(crate) fn is_plain_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.contains(&b'/') && !name.contains(&0)
}

/// Why a request was refused before reaching the server: the errno of the `Rlerror` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A name that is not a single component inside its directory (`EINVAL`).
    BadName,
    /// A change to a read-only share (`EROFS`).
    ReadOnly,
    /// A message too short for the fields its type has (`EINVAL`).
    Truncated,
}

impl Refusal {
    /// The errno sent to the guest.
    pub(crate) fn errno(self) -> i32 {
        match self {
            Self::BadName | Self::Truncated => libc::EINVAL,
            Self::ReadOnly => libc::EROFS,
        }
    }
}

/// Checks one request (a whole message, header included) and applies the ownership and mode
/// policy by rewriting fields in place. `Ok` means: hand it to the server.
pub(crate) fn screen(message: &mut [u8], read_only: bool) -> Result<(), Refusal> {
    let Some(header) = Header::parse(message) else {
        // Not even a header: the server fails to decode it and nothing is answered.
        return Ok(());
    };
    let mut fields = Fields::new(message);
    let mut rewrites: Vec<Rewrite> = Vec::new();
    let name = |fields: &mut Fields<'_>| -> Result<(), Refusal> {
        let name = fields.string().ok_or(Refusal::Truncated)?;
        if is_plain_name(name) {
            Ok(())
        } else {
            Err(Refusal::BadName)
        }
    };
    let fid = |fields: &mut Fields<'_>| fields.u32().map(|_| ()).ok_or(Refusal::Truncated);
    let writes = |read_only: bool| {
        if read_only {
            Err(Refusal::ReadOnly)
        } else {
            Ok(())
        }
    };
    match header.kind {
        msg::TWALK => {
            fid(&mut fields)?;
            fid(&mut fields)?;
            let count = fields.u16().ok_or(Refusal::Truncated)?;
            for _ in 0..count {
                name(&mut fields)?;
            }
        }
        msg::TLOPEN => {
            fid(&mut fields)?;
            let (at, flags) = fields.u32().ok_or(Refusal::Truncated)?;
            let changes =
                flags & P9_ACCMODE != 0 || flags & (P9_TRUNC | P9_CREATE | P9_APPEND) != 0;
            if read_only && changes {
                return Err(Refusal::ReadOnly);
            }
            rewrites.push(Rewrite {
                at,
                value: flags | P9_NONBLOCK,
            });
        }
        msg::TLCREATE => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
            fields.u32().ok_or(Refusal::Truncated)?;
            let (at, mode) = fields.u32().ok_or(Refusal::Truncated)?;
            rewrites.push(Rewrite {
                at,
                value: mode & !SET_ID_BITS,
            });
        }
        msg::TSYMLINK | msg::TMKNOD => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TRENAME => {
            writes(read_only)?;
            fid(&mut fields)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TSETATTR => {
            writes(read_only)?;
            fid(&mut fields)?;
            let (valid_at, valid) = fields.u32().ok_or(Refusal::Truncated)?;
            let (mode_at, mode) = fields.u32().ok_or(Refusal::Truncated)?;
            rewrites.push(Rewrite {
                at: valid_at,
                value: valid & !(P9_SETATTR_UID | P9_SETATTR_GID),
            });
            if valid & P9_SETATTR_MODE != 0 {
                rewrites.push(Rewrite {
                    at: mode_at,
                    value: mode & !SET_ID_BITS,
                });
            }
        }
        msg::TXATTRWALK => {
            fid(&mut fields)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TXATTRCREATE => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TLINK => {
            writes(read_only)?;
            fid(&mut fields)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TMKDIR => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
            let (at, mode) = fields.u32().ok_or(Refusal::Truncated)?;
            // Set-group-ID on a directory only makes new entries inherit its group.
            rewrites.push(Rewrite {
                at,
                value: mode & !(SET_ID_BITS & !0o2000),
            });
        }
        msg::TRENAMEAT => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TUNLINKAT => {
            writes(read_only)?;
            fid(&mut fields)?;
            name(&mut fields)?;
        }
        msg::TWRITE | msg::TREMOVE => writes(read_only)?,
        _ => {}
    }
    for rewrite in rewrites {
        message[rewrite.at..rewrite.at + 4].copy_from_slice(&rewrite.value.to_le_bytes());
    }
    Ok(())
}

/// A 32-bit field to overwrite once the whole message has been checked.
struct Rewrite {
    at: usize,
    value: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a message of `kind` with `body`.
    pub(crate) fn message(kind: u8, tag: u16, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&((HEADER_LEN + body.len()) as u32).to_le_bytes());
        out.push(kind);
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    fn string(s: &[u8]) -> Vec<u8> {
        let mut out = (s.len() as u16).to_le_bytes().to_vec();
        out.extend_from_slice(s);
        out
    }

    fn walk(names: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&2u32.to_le_bytes());
        body.extend_from_slice(&(names.len() as u16).to_le_bytes());
        for name in names {
            body.extend_from_slice(&string(name));
        }
        message(msg::TWALK, 9, &body)
    }

    #[test]
    fn plain_names_pass_and_escaping_names_do_not() {
        for good in [&b"a"[..], b"file.txt", b"...", b".hidden", b"a..b"] {
            assert!(is_plain_name(good), "{good:?}");
        }
        for bad in [
            &b""[..],
            b".",
            b"..",
            b"a/b",
            b"/etc",
            b"../x",
            b"a\0b",
            b"x/",
        ] {
            assert!(!is_plain_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn walks_with_escaping_names_are_refused() {
        assert_eq!(screen(&mut walk(&[b"a", b"b"]), false), Ok(()));
        assert_eq!(screen(&mut walk(&[]), false), Ok(()));
        for bad in [&b".."[..], b"a/../..", b"link/passwd", b".", b""] {
            assert_eq!(
                screen(&mut walk(&[b"a", bad]), false),
                Err(Refusal::BadName),
                "{bad:?}"
            );
        }
        // A count larger than the names present.
        let mut short = walk(&[b"a"]);
        short[15] = 3;
        assert_eq!(screen(&mut short, false), Err(Refusal::Truncated));
    }

    #[test]
    fn read_only_refuses_every_change() {
        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&string(b"f"));
        body.extend_from_slice(&[0; 12]);
        for kind in [
            msg::TLCREATE,
            msg::TSYMLINK,
            msg::TMKNOD,
            msg::TMKDIR,
            msg::TUNLINKAT,
            msg::TXATTRCREATE,
            msg::TWRITE,
            msg::TREMOVE,
            msg::TSETATTR,
            msg::TRENAME,
            msg::TRENAMEAT,
            msg::TLINK,
        ] {
            let mut m = message(kind, 1, &body);
            assert_eq!(screen(&mut m, true), Err(Refusal::ReadOnly), "type {kind}");
        }
        let lopen = |flags: u32| {
            let mut body = 1u32.to_le_bytes().to_vec();
            body.extend_from_slice(&flags.to_le_bytes());
            message(msg::TLOPEN, 1, &body)
        };
        assert_eq!(screen(&mut lopen(0), true), Ok(()));
        for flags in [1, 2, P9_TRUNC, P9_APPEND, P9_CREATE] {
            assert_eq!(screen(&mut lopen(flags), true), Err(Refusal::ReadOnly));
        }
        assert_eq!(screen(&mut lopen(2), false), Ok(()));
    }

    #[test]
    fn ownership_changes_and_set_id_bits_are_dropped() {
        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&(P9_SETATTR_MODE | P9_SETATTR_UID | P9_SETATTR_GID).to_le_bytes());
        body.extend_from_slice(&0o104_755u32.to_le_bytes());
        body.extend_from_slice(&[0; 56]);
        let mut m = message(msg::TSETATTR, 1, &body);
        screen(&mut m, false).unwrap();
        assert_eq!(&m[11..15], &P9_SETATTR_MODE.to_le_bytes());
        assert_eq!(&m[15..19], &0o100_755u32.to_le_bytes());

        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&string(b"f"));
        body.extend_from_slice(&0u32.to_le_bytes());
        body.extend_from_slice(&0o6755u32.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        let mut m = message(msg::TLCREATE, 1, &body);
        screen(&mut m, false).unwrap();
        assert_eq!(&m[18..22], &0o755u32.to_le_bytes());

        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&1u32.to_le_bytes());
        let mut m = message(msg::TLOPEN, 1, &body);
        screen(&mut m, false).unwrap();
        assert_eq!(&m[11..15], &(1 | P9_NONBLOCK).to_le_bytes());
    }

    #[test]
    fn names_in_every_naming_request_are_checked() {
        let with_name = |kind: u8, fids_before: usize, name: &[u8]| {
            let mut body = Vec::new();
            for _ in 0..fids_before {
                body.extend_from_slice(&1u32.to_le_bytes());
            }
            body.extend_from_slice(&string(name));
            body.extend_from_slice(&[0; 16]);
            message(kind, 1, &body)
        };
        for (kind, fids) in [
            (msg::TLCREATE, 1),
            (msg::TSYMLINK, 1),
            (msg::TMKNOD, 1),
            (msg::TMKDIR, 1),
            (msg::TUNLINKAT, 1),
            (msg::TLINK, 2),
            (msg::TRENAME, 2),
            (msg::TXATTRWALK, 2),
        ] {
            assert_eq!(
                screen(&mut with_name(kind, fids, b"../x"), false),
                Err(Refusal::BadName),
                "type {kind}"
            );
            assert_eq!(screen(&mut with_name(kind, fids, b"x"), false), Ok(()));
        }
        let renameat = |old: &[u8], new: &[u8]| {
            let mut body = 1u32.to_le_bytes().to_vec();
            body.extend_from_slice(&string(old));
            body.extend_from_slice(&2u32.to_le_bytes());
            body.extend_from_slice(&string(new));
            message(msg::TRENAMEAT, 1, &body)
        };
        assert_eq!(screen(&mut renameat(b"a", b"b"), false), Ok(()));
        assert_eq!(
            screen(&mut renameat(b"a", b"../b"), false),
            Err(Refusal::BadName)
        );
        assert_eq!(
            screen(&mut renameat(b"..", b"b"), false),
            Err(Refusal::BadName)
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..400usize {
            for _ in 0..20 {
                let mut m: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect();
                if len > 4 {
                    // Mostly message types the filter parses.
                    m[4] = [110, 12, 14, 16, 18, 20, 26, 30, 32, 70, 72, 74, 76][len % 13];
                }
                let _ = screen(&mut m, len % 2 == 0);
            }
        }
    }

    #[test]
    fn error_reply_layout() {
        let reply = error_reply(0x1234, libc::EROFS);
        assert_eq!(Header::parse(&reply).unwrap().size, 11);
        assert_eq!(reply[4], msg::RLERROR);
        assert_eq!(&reply[5..7], &[0x34, 0x12]);
        assert_eq!(&reply[7..], &(libc::EROFS as u32).to_le_bytes());
    }
}
