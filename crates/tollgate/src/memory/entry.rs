//! What an entry is: its source, content type, images (MIME type checked against the bytes) and
//! the validated form of a new entry.

use serde_json::{Map, Value};

use super::MemoryError;

/// Text larger than this is refused (the seed sets no bound; a memory is a note, not a file).
pub const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Images per entry.
pub const MAX_IMAGES: usize = 8;
/// One decoded image.
pub const MAX_IMAGE_BYTES: usize = 4 * 1024 * 1024;
/// Tags per entry, and characters per tag.
pub const MAX_TAGS: usize = 50;
pub const MAX_TAG_CHARS: usize = 100;
/// A thread id's length in bytes.
const MAX_THREAD_ID_BYTES: usize = 256;
/// Serialised metadata.
const MAX_METADATA_BYTES: usize = 64 * 1024;

/// Who wrote an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    User,
    Agent,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Agent => "agent",
        }
    }

    pub fn parse(text: &str) -> Option<Source> {
        match text {
            "user" => Some(Source::User),
            "agent" => Some(Source::Agent),
            _ => None,
        }
    }
}

/// `multimodal` when an entry has images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    Text,
    Multimodal,
}

impl ContentType {
    pub fn as_str(self) -> &'static str {
        match self {
            ContentType::Text => "text",
            ContentType::Multimodal => "multimodal",
        }
    }

    pub fn parse(text: &str) -> Option<ContentType> {
        match text {
            "text" => Some(ContentType::Text),
            "multimodal" => Some(ContentType::Multimodal),
            _ => None,
        }
    }
}

/// The image types an entry may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageMime {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageMime {
    pub const ALL: [ImageMime; 4] = [
        ImageMime::Png,
        ImageMime::Jpeg,
        ImageMime::Gif,
        ImageMime::Webp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ImageMime::Png => "image/png",
            ImageMime::Jpeg => "image/jpeg",
            ImageMime::Gif => "image/gif",
            ImageMime::Webp => "image/webp",
        }
    }

    pub fn parse(text: &str) -> Option<ImageMime> {
        let text = text.trim().to_ascii_lowercase();
        let text = if text == "image/jpg" {
            "image/jpeg"
        } else {
            &text
        };
        ImageMime::ALL
            .into_iter()
            .find(|mime| mime.as_str() == text)
    }

    /// Whether `data` starts with this type's signature: a declared type that the bytes
    /// contradict is refused rather than stored and served under the wrong type.
    fn matches(self, data: &[u8]) -> bool {
        match self {
            ImageMime::Png => data.starts_with(b"\x89PNG\r\n\x1a\n"),
            ImageMime::Jpeg => data.starts_with(&[0xFF, 0xD8, 0xFF]),
            ImageMime::Gif => data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a"),
            ImageMime::Webp => data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP",
        }
    }
}

/// An image whose bytes match its type and fit [`MAX_IMAGE_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    mime: ImageMime,
    data: Vec<u8>,
}

impl Image {
    /// `field` names the image in errors (`images[0]`).
    pub fn new(field: &str, mime_type: &str, data: Vec<u8>) -> Result<Image, MemoryError> {
        let mime = ImageMime::parse(mime_type).ok_or_else(|| {
            MemoryError::invalid(
                format!("{field}.mime_type"),
                format!(
                    "`{mime_type}` is not a supported image type (expected one of {})",
                    ImageMime::ALL.map(ImageMime::as_str).join(", ")
                ),
            )
        })?;
        if data.len() > MAX_IMAGE_BYTES {
            return Err(MemoryError::TooLarge {
                field: format!("{field}.data"),
                message: format!(
                    "the image is {} bytes, over the limit of {MAX_IMAGE_BYTES}",
                    data.len()
                ),
            });
        }
        if !mime.matches(&data) {
            return Err(MemoryError::invalid(
                format!("{field}.data"),
                format!("the bytes are not a {} image", mime.as_str()),
            ));
        }
        Ok(Image { mime, data })
    }

    /// An image read back from the store (validated when it was stored).
    pub(crate) fn stored(mime: ImageMime, data: Vec<u8>) -> Image {
        Image { mime, data }
    }

    pub fn mime(&self) -> ImageMime {
        self.mime
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

/// A validated entry about to be stored (its secrets not masked yet: [`super::Memory`] does
/// that, so every way in goes through the same masking).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    pub(crate) thread_id: String,
    pub(crate) source: Source,
    pub(crate) text: String,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) tags: Vec<String>,
    pub(crate) images: Vec<Image>,
    /// Secrets already masked while the fields were normalised (the thread id, tags).
    pub(crate) masked: usize,
}

impl NewEntry {
    /// Checks every bound; errors name the field (`text`, `tags[2]`, `images[0].data`).
    pub fn new(
        thread_id: &str,
        source: Source,
        text: &str,
        metadata: Map<String, Value>,
        tags: &[String],
        images: Vec<Image>,
    ) -> Result<NewEntry, MemoryError> {
        let mut masked = 0;
        let thread_id = mask_secrets(&check_thread_id("thread_id", thread_id)?, &mut masked);
        Ok(NewEntry {
            thread_id,
            source,
            text: check_text("text", text)?,
            metadata: check_metadata("metadata", metadata)?,
            tags: normalize_tags("tags", tags, &mut masked)?,
            images: check_images("images", images)?,
            masked,
        })
    }

    pub fn content_type(&self) -> ContentType {
        content_type_of(&self.images)
    }
}

pub(crate) fn content_type_of(images: &[Image]) -> ContentType {
    if images.is_empty() {
        ContentType::Text
    } else {
        ContentType::Multimodal
    }
}

pub(crate) fn check_thread_id(field: &str, thread_id: &str) -> Result<String, MemoryError> {
    let trimmed = thread_id.trim();
    if trimmed.is_empty() {
        return Err(MemoryError::invalid(field, "must not be empty"));
    }
    if trimmed.len() > MAX_THREAD_ID_BYTES || trimmed.chars().any(char::is_control) {
        return Err(MemoryError::invalid(
            field,
            format!("must be at most {MAX_THREAD_ID_BYTES} bytes without control characters"),
        ));
    }
    Ok(trimmed.to_string())
}

pub(crate) fn check_text(field: &str, text: &str) -> Result<String, MemoryError> {
    if text.trim().is_empty() {
        return Err(MemoryError::invalid(field, "must not be empty"));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(MemoryError::TooLarge {
            field: field.to_string(),
            message: format!(
                "the text is {} bytes, over the limit of {MAX_TEXT_BYTES}",
                text.len()
            ),
        });
    }
    Ok(text.to_string())
}

pub(crate) fn check_metadata(
    field: &str,
    metadata: Map<String, Value>,
) -> Result<Map<String, Value>, MemoryError> {
    let size = serde_json::to_vec(&metadata).map_or(0, |bytes| bytes.len());
    if size > MAX_METADATA_BYTES {
        return Err(MemoryError::TooLarge {
            field: field.to_string(),
            message: format!(
                "the metadata is {size} bytes of JSON, over the limit of {MAX_METADATA_BYTES}"
            ),
        });
    }
    Ok(metadata)
}

/// `text` with every secret masked; `n` counts them. Run before any case folding: a detector
/// knows `AKIA…`, not `akia…`.
pub(crate) fn mask_secrets(text: &str, n: &mut usize) -> String {
    let scrubbed = crate::secrets::scrub(text, 0, 0);
    *n += scrubbed.secrets.len();
    scrubbed.text
}

/// A thread id as it is stored (secrets masked), so a filter or a delete naming a thread as
/// the caller knows it finds the stored one.
pub fn stored_thread_id(thread_id: &str) -> String {
    mask_secrets(thread_id.trim(), &mut 0)
}

/// Trimmed, secrets masked, then lower-cased, without duplicates, in the order given; `masked`
/// counts the secrets.
pub(crate) fn normalize_tags(
    field: &str,
    tags: &[String],
    masked: &mut usize,
) -> Result<Vec<String>, MemoryError> {
    if tags.len() > MAX_TAGS {
        return Err(MemoryError::TooLarge {
            field: field.to_string(),
            message: format!("{} tags, over the limit of {MAX_TAGS}", tags.len()),
        });
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for (idx, tag) in tags.iter().enumerate() {
        let tag = mask_secrets(tag.trim(), masked).to_lowercase();
        if tag.is_empty()
            || tag.chars().count() > MAX_TAG_CHARS
            || tag.chars().any(char::is_control)
        {
            return Err(MemoryError::invalid(
                format!("{field}[{idx}]"),
                format!("a tag is 1 to {MAX_TAG_CHARS} characters without control characters"),
            ));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    Ok(out)
}

pub(crate) fn check_images(field: &str, images: Vec<Image>) -> Result<Vec<Image>, MemoryError> {
    if images.len() > MAX_IMAGES {
        return Err(MemoryError::TooLarge {
            field: field.to_string(),
            message: format!("{} images, over the limit of {MAX_IMAGES}", images.len()),
        });
    }
    Ok(images)
}

/// A stored entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub thread_id: String,
    pub source: Source,
    pub content_type: ContentType,
    pub text: String,
    pub metadata: Map<String, Value>,
    pub tags: Vec<String>,
    /// Empty unless images were asked for.
    pub images: Vec<Image>,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// Unix milliseconds as RFC 3339 UTC with milliseconds (`2025-11-29T10:00:00.000Z`).
pub fn format_ms(ms: i64) -> String {
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

/// Tags in a filter, normalised like stored ones.
pub fn normalize_filter_tags(tags: &[String]) -> Result<Vec<String>, MemoryError> {
    normalize_tags("tags", tags, &mut 0)
}
