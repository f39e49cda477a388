//! Where a job is and where its remote applicants may live: countries by their ISO 3166-1
//! alpha-2 codes, places with optional coordinates, and remote regions.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::DomainError;

/// A country, as its ISO 3166-1 alpha-2 code in upper case, such as `DE`. Read in any case;
/// only officially assigned codes are taken.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Country([u8; 2]);

impl Country {
    /// Reads a code in any case, with surrounding spaces trimmed.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        let code = raw.trim().to_ascii_uppercase();
        if iso3166_1::alpha2(&code).is_some() {
            let bytes = code.as_bytes();
            return Ok(Self([bytes[0], bytes[1]]));
        }
        let shown: String = raw.chars().take(16).collect();
        Err(DomainError::new(
            "country",
            format!(
                "must be an ISO 3166-1 alpha-2 country code such as DE, US or BR; `{shown}` is not one"
            ),
        ))
    }

    /// Reads two ASCII letters in any case, as a search takes a country: whether ISO assigns
    /// the code is not asked (a code no job has matches nothing, as another unheld label
    /// does), only its form.
    pub fn parse_code(raw: &str) -> Result<Self, DomainError> {
        match raw.trim().as_bytes() {
            &[a, b] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() => {
                Ok(Self([a.to_ascii_uppercase(), b.to_ascii_uppercase()]))
            }
            _ => {
                let shown: String = raw.chars().take(16).collect();
                Err(DomainError::new(
                    "country",
                    format!(
                        "must be an ISO 3166-1 alpha-2 country code of two letters, such as DE, US or BR; `{shown}` is not one"
                    ),
                ))
            }
        }
    }

    /// The code, in upper case.
    pub fn as_str(&self) -> &str {
        // Only ASCII letters are ever stored.
        std::str::from_utf8(&self.0).unwrap_or("??")
    }
}

impl fmt::Debug for Country {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Country {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Country {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read by form only: a record's codes are checked against ISO's when it is validated
/// (`Job::validate`), and a saved search may hold any well-formed code.
impl<'de> Deserialize<'de> for Country {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = std::borrow::Cow::<str>::deserialize(d)?;
        Self::parse_code(&raw).map_err(|e| serde::de::Error::custom(e.reason))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Country {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Country".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[A-Z]{2}$",
            "description": "An ISO 3166-1 alpha-2 country code, upper case."
        })
    }
}

/// A currency, as its ISO 4217 code in upper case, such as `EUR`: three letters, read in any
/// case.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

impl Currency {
    /// Reads three ASCII letters, in any case.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        match raw.trim().as_bytes() {
            &[a, b, c] if [a, b, c].iter().all(u8::is_ascii_alphabetic) => Ok(Self([
                a.to_ascii_uppercase(),
                b.to_ascii_uppercase(),
                c.to_ascii_uppercase(),
            ])),
            _ => Err(DomainError::new(
                "salary_currency",
                "must be an ISO 4217 currency code of three letters, such as EUR or USD",
            )),
        }
    }

    /// The code, in upper case.
    pub fn as_str(&self) -> &str {
        // Only ASCII letters are ever stored.
        std::str::from_utf8(&self.0).unwrap_or("???")
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = std::borrow::Cow::<str>::deserialize(d)?;
        Self::parse(&raw).map_err(|e| serde::de::Error::custom(e.reason))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Currency {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Currency".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "pattern": "^[A-Z]{3}$" })
    }
}

/// Where a remote job's applicants may live: one country, or anywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RemoteRegion {
    /// Anywhere in the world (`worldwide`).
    Worldwide,
    /// This country.
    Country(Country),
}

impl RemoteRegion {
    /// Reads `worldwide` (any case) or a country code ISO assigns.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        Self::read(raw, Country::parse)
    }

    /// Reads `worldwide` or a country code by its form, as [`Country::parse_code`].
    fn read(
        raw: &str,
        country: impl Fn(&str) -> Result<Country, DomainError>,
    ) -> Result<Self, DomainError> {
        if raw.trim().eq_ignore_ascii_case("worldwide") {
            return Ok(Self::Worldwide);
        }
        country(raw).map(Self::Country).map_err(|_| {
            let shown: String = raw.chars().take(16).collect();
            DomainError::new(
                "remote_regions",
                format!(
                    "each must be an ISO 3166-1 alpha-2 country code such as DE, or worldwide; `{shown}` is neither"
                ),
            )
        })
    }

    /// `worldwide` or the country's code.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Worldwide => "worldwide",
            Self::Country(c) => c.as_str(),
        }
    }
}

impl Serialize for RemoteRegion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read by form only, as [`Country`] is.
impl<'de> Deserialize<'de> for RemoteRegion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = std::borrow::Cow::<str>::deserialize(d)?;
        Self::read(&raw, Country::parse_code).map_err(|e| serde::de::Error::custom(e.reason))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for RemoteRegion {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RemoteRegion".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^([A-Z]{2}|worldwide)$",
            "description": "An ISO 3166-1 alpha-2 country code (upper case), or `worldwide`."
        })
    }
}

/// A place a job is at: a country, and optionally a region, a city and coordinates (both
/// or neither). Every field is always written (null when not known): the stored records'
/// binary form has no room for a field left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// The country.
    pub country: Country,
    /// A region of it, such as a state or a province: at most 200 bytes.
    #[serde(default)]
    pub region: Option<String>,
    /// The city: at most 200 bytes.
    #[serde(default)]
    pub city: Option<String>,
    /// Latitude in degrees, -90 to 90; given with `lon`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(range(min = -90, max = 90)))]
    pub lat: Option<f64>,
    /// Longitude in degrees, -180 to 180; given with `lat`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(range(min = -180, max = 180)))]
    pub lon: Option<f64>,
}

impl Place {
    /// A place in `country`, with nothing else said.
    pub fn new(country: Country) -> Self {
        Self {
            country,
            region: None,
            city: None,
            lat: None,
            lon: None,
        }
    }

    /// The coordinates, when the place has them.
    pub fn coordinates(&self) -> Option<(f64, f64)> {
        self.lat.zip(self.lon)
    }
}

/// Most places a job may name.
pub const MAX_PLACES: usize = 20;

/// Most remote regions a job may name.
pub const MAX_REMOTE_REGIONS: usize = 60;

/// Checks places and remote regions as a posting holds them: bounded lists, countries ISO
/// assigns, bounded text, coordinates both or neither and within range. Each error names the
/// entry.
pub(super) fn check_places(
    places: &[Place],
    remote_regions: &[RemoteRegion],
) -> Result<(), DomainError> {
    let assigned = |c: &Country| iso3166_1::alpha2(c.as_str()).is_some();
    for (i, region) in remote_regions.iter().enumerate() {
        if let RemoteRegion::Country(c) = region {
            if !assigned(c) {
                return Err(DomainError::new(
                    "remote_regions",
                    format!("[{i}] `{c}` is not an ISO 3166-1 alpha-2 country code ISO assigns; name a country such as DE, or worldwide"),
                ));
            }
        }
    }
    let remote_regions = remote_regions.len();
    if places.len() > MAX_PLACES {
        return Err(DomainError::new(
            "places",
            format!("must hold at most {MAX_PLACES} places"),
        ));
    }
    if remote_regions > MAX_REMOTE_REGIONS {
        return Err(DomainError::new(
            "remote_regions",
            format!("must hold at most {MAX_REMOTE_REGIONS} regions"),
        ));
    }
    for (i, place) in places.iter().enumerate() {
        let at = |what: &str, why: &str| DomainError::new("places", format!("[{i}].{what} {why}"));
        if !assigned(&place.country) {
            return Err(at(
                "country",
                "must be an ISO 3166-1 alpha-2 country code ISO assigns, such as DE, US or BR",
            ));
        }
        for (what, text) in [("region", &place.region), ("city", &place.city)] {
            if text.as_ref().is_some_and(|t| t.len() > 200) {
                return Err(at(what, "must be at most 200 bytes"));
            }
        }
        match (place.lat, place.lon) {
            (Some(_), None) => return Err(at("lon", "is required with lat")),
            (None, Some(_)) => return Err(at("lat", "is required with lon")),
            (Some(lat), Some(lon)) => {
                if !(lat.is_finite() && (-90.0..=90.0).contains(&lat)) {
                    return Err(at("lat", "must be a number from -90 to 90"));
                }
                if !(lon.is_finite() && (-180.0..=180.0).contains(&lon)) {
                    return Err(at("lon", "must be a number from -180 to 180"));
                }
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// The mean radius of the Earth in kilometres (IUGG), which `near` measures distances with.
pub const EARTH_RADIUS_KM: f64 = 6_371.008_8;

/// The great-circle distance in kilometres between two points given in degrees, by the
/// haversine formula on a sphere of [`EARTH_RADIUS_KM`].
pub fn distance_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lon1) = (a.0.to_radians(), a.1.to_radians());
    let (lat2, lon2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * h.sqrt().min(1.0).asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countries_are_assigned_codes_in_any_case_kept_upper() {
        assert_eq!(Country::parse(" de ").unwrap().as_str(), "DE");
        for bad in ["XX", "DEU", "D", "", "1A", "uk"] {
            assert!(Country::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            RemoteRegion::parse("WorldWide").unwrap(),
            RemoteRegion::Worldwide
        );
        assert!(RemoteRegion::parse("earth").is_err());
    }

    /// Searches take any two letters; a record's codes must be ones ISO assigns.
    #[test]
    fn records_hold_assigned_codes_and_searches_any_two_letters() {
        let xx = Country::parse_code("xx").unwrap();
        assert_eq!(xx.as_str(), "XX");
        assert!(Country::parse_code("D1").is_err());
        let e = check_places(&[Place::new(xx)], &[]).unwrap_err();
        assert!(e.reason.starts_with("[0].country"), "{}", e.reason);
        let region: RemoteRegion = serde_json::from_str("\"xx\"").unwrap();
        let e = check_places(&[], &[RemoteRegion::Worldwide, region]).unwrap_err();
        assert!(e.reason.starts_with("[1] `XX`"), "{}", e.reason);
    }

    #[test]
    fn distances_are_great_circle_kilometres() {
        let berlin = (52.52, 13.405);
        let paris = (48.8566, 2.3522);
        let d = distance_km(berlin, paris);
        assert!((d - 877.5).abs() < 1.0, "{d}");
        assert_eq!(distance_km(berlin, berlin), 0.0);
        let antipodes = distance_km((0.0, 0.0), (0.0, 180.0));
        assert!((antipodes - std::f64::consts::PI * EARTH_RADIUS_KM).abs() < 1e-6);
    }

    #[test]
    fn coordinates_come_both_or_neither_and_within_range() {
        let mut place = Place::new(Country::parse("FR").unwrap());
        place.lat = Some(48.0);
        let e = check_places(std::slice::from_ref(&place), &[]).unwrap_err();
        assert_eq!(e.reason, "[0].lon is required with lat");
        place.lon = Some(181.0);
        assert!(check_places(&[place.clone()], &[]).is_err());
        place.lon = Some(2.0);
        assert!(check_places(&[place], &[]).is_ok());
    }
}
