//! The layers of a harness spec, and the band each gives the middleware it declares.
//!
//! hook-bus.md, "Where bands come from": the layer that declares a middleware sets its band,
//! not the code that implements it (the decorator's band is only the default for direct
//! registration). A spec item may restate that band or move it inward, never outward
//! (ruling 16), and only profiles put middleware in baseline (S8, ruling 17). I13 names the
//! layers.

use crate::band::Band;
use crate::declaration::{override_from, Declaration, Overrides};
use crate::error::{
    band_outward, baseline_outside_profile, invalid_value, quote, Error, ErrorKind,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// `org://…`: the organisation's profile.
    OrgProfile,
    /// `profile://namespace.name`: a profile shipped by a plugin.
    PluginProfile,
    /// A profile file named by path.
    ProfileFile,
    /// `profile://name`: a profile shipped with harnessweaver.
    BuiltinProfile,
    /// The framework's own defaults.
    Framework,
    /// The app's `harness.yaml`.
    App,
    /// An environment overlay.
    Env,
    /// A task's own guardrails and validation rules.
    Task,
}

impl Layer {
    pub const ALL: [Layer; 8] = [
        Layer::OrgProfile,
        Layer::PluginProfile,
        Layer::ProfileFile,
        Layer::BuiltinProfile,
        Layer::Framework,
        Layer::App,
        Layer::Env,
        Layer::Task,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::OrgProfile => "org_profile",
            Self::PluginProfile => "plugin_profile",
            Self::ProfileFile => "profile_file",
            Self::BuiltinProfile => "builtin_profile",
            Self::Framework => "framework",
            Self::App => "app",
            Self::Env => "env",
            Self::Task => "task",
        }
    }

    /// One of the layer names of I13, exactly; anything else is `unknown_layer`.
    pub fn parse(text: &str) -> Result<Layer, Error> {
        Self::ALL
            .into_iter()
            .find(|layer| layer.as_str() == text)
            .ok_or_else(|| invalid_value(ErrorKind::UnknownLayer, "layer", &quote(text)))
    }

    /// The band this layer gives its middleware (the table of hook-bus.md).
    pub fn band(self) -> Band {
        match self {
            Self::OrgProfile | Self::PluginProfile | Self::ProfileFile => Band::Baseline,
            Self::BuiltinProfile | Self::Framework => Band::Platform,
            Self::App | Self::Env => Band::App,
            Self::Task => Band::Task,
        }
    }

    /// Whether this layer may place middleware in baseline (S8).
    pub fn is_profile(self) -> bool {
        self.band() == Band::Baseline
    }

    /// Ruling 16 and S8: may a spec item of this layer, for middleware `name`, ask for `band`?
    pub fn allow(self, name: &str, band: Band) -> Result<(), Error> {
        if band >= self.band() {
            Ok(())
        } else if band == Band::Baseline {
            Err(baseline_outside_profile(name, self.as_str()))
        } else {
            Err(band_outward(
                name,
                self.as_str(),
                self.band().as_str(),
                band.as_str(),
            ))
        }
    }
}

/// A middleware as a spec item of `layer` declares it: its band is the layer's (whatever the
/// decorator said), then the item's keys apply in the order of I4, an explicit band only
/// restating or moving inward; R2 is checked on the result.
pub fn declare_in_layer(
    decl: &Declaration,
    layer: Layer,
    item: &Overrides<'_>,
) -> Result<Declaration, Error> {
    let start = Declaration {
        band: layer.band(),
        ..decl.clone()
    };
    override_from(decl, start, item, Some(layer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declaration::{declare, DeclarationInput};
    use crate::fail_mode::FailMode;

    fn decl(band: &str, fail_mode: &str) -> Declaration {
        let input = DeclarationInput {
            name: "guard",
            hooks: &["tool.before", "tool.after"],
            band: Some(band),
            fail_mode: Some(fail_mode),
            timeout: None,
            matcher: None,
            mode: None,
        };
        declare(&input).expect("a valid declaration")
    }

    fn item(band: Option<&'static str>) -> Overrides<'static> {
        Overrides {
            band,
            ..Overrides::default()
        }
    }

    #[test]
    fn every_layer_gives_the_band_of_the_spec_table() {
        let bands: Vec<&str> = Layer::ALL.iter().map(|l| l.band().as_str()).collect();
        assert_eq!(
            bands,
            ["baseline", "baseline", "baseline", "platform", "platform", "app", "app", "task"]
        );
        for layer in Layer::ALL {
            assert_eq!(Layer::parse(layer.as_str()), Ok(layer));
        }
    }

    #[test]
    fn the_layer_not_the_decorator_sets_the_band() {
        let got = declare_in_layer(&decl("baseline", "closed"), Layer::App, &item(None));
        assert_eq!(got.map(|d| d.band), Ok(Band::App));
        let got = declare_in_layer(&decl("task", "closed"), Layer::OrgProfile, &item(None));
        assert_eq!(got.map(|d| d.band), Ok(Band::Baseline));
    }

    #[test]
    fn ruling_16_restate_or_move_inward_never_outward() {
        let d = decl("app", "closed");
        assert_eq!(
            declare_in_layer(&d, Layer::App, &item(Some("app"))).map(|d| d.band),
            Ok(Band::App)
        );
        assert_eq!(
            declare_in_layer(&d, Layer::App, &item(Some("task"))).map(|d| d.band),
            Ok(Band::Task)
        );
        let err = declare_in_layer(&d, Layer::Task, &item(Some("app"))).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BandOutward);
        assert!(err.message.contains("'app'") && err.message.contains("ruling 16"));
    }

    #[test]
    fn s8_only_profiles_put_middleware_in_baseline() {
        let d = decl("app", "closed");
        for layer in [
            Layer::BuiltinProfile,
            Layer::Framework,
            Layer::App,
            Layer::Env,
            Layer::Task,
        ] {
            let err = declare_in_layer(&d, layer, &item(Some("baseline"))).unwrap_err();
            assert_eq!(err.kind, ErrorKind::BaselineOutsideProfile, "{layer:?}");
            assert!(err.message.contains("(S8)"));
        }
        for layer in [Layer::OrgProfile, Layer::PluginProfile, Layer::ProfileFile] {
            assert!(declare_in_layer(&d, layer, &item(Some("baseline"))).is_ok());
        }
    }

    #[test]
    fn r2_baseline_fails_closed_unless_the_item_closes_it() {
        let open = decl("app", "open");
        let err = declare_in_layer(&open, Layer::PluginProfile, &item(None)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BaselineFailOpen);
        let closed = Overrides {
            fail_mode: Some("closed"),
            ..Overrides::default()
        };
        let got = declare_in_layer(&open, Layer::PluginProfile, &closed);
        assert_eq!(got.map(|d| d.fail_mode), Ok(FailMode::Closed));
        let inward = Overrides {
            band: Some("platform"),
            ..Overrides::default()
        };
        assert!(declare_in_layer(&open, Layer::ProfileFile, &inward).is_ok());
    }

    #[test]
    fn hooks_narrow_against_the_declaration() {
        let d = decl("app", "closed");
        let narrow = Overrides {
            hooks: Some(&["tool.after"]),
            ..Overrides::default()
        };
        assert_eq!(
            declare_in_layer(&d, Layer::Env, &narrow).map(|d| d.hook_names()),
            Ok(vec!["tool.after"])
        );
        let wide = Overrides {
            hooks: Some(&["model.before"]),
            ..Overrides::default()
        };
        let err = declare_in_layer(&d, Layer::Env, &wide).unwrap_err();
        assert_eq!(err.kind, ErrorKind::HooksWidened);
    }

    #[test]
    fn unknown_layers_are_named() {
        let err = Layer::parse("apps").unwrap_err();
        assert_eq!(
            (err.kind, err.kind.rule()),
            (ErrorKind::UnknownLayer, "I13")
        );
        assert!(err.message.contains("'apps'") && err.message.contains("(I13)"));
    }

    /// I25: only an org profile item that itself sets `mode: audit` audits baseline.
    #[test]
    fn only_the_org_item_audits_baseline_i25() {
        use crate::mode::Mode;
        let d = decl("app", "closed");
        let audit = Overrides {
            mode: Some("audit"),
            ..Overrides::default()
        };
        let org = declare_in_layer(&d, Layer::OrgProfile, &audit).unwrap();
        assert_eq!((org.band, org.mode), (Band::Baseline, Mode::Audit));
        for layer in [Layer::PluginProfile, Layer::ProfileFile] {
            let err = declare_in_layer(&d, layer, &audit).unwrap_err();
            assert_eq!(err.kind, ErrorKind::BaselineAuditNotOrg);
        }
        assert_eq!(
            declare_in_layer(&d, Layer::App, &audit).unwrap().mode,
            Mode::Audit
        );
        // Declared audit, loaded by the org without restating the mode: refused.
        let declared_audit = Declaration {
            mode: Mode::Audit,
            ..d.clone()
        };
        let none = Overrides::default();
        let err = declare_in_layer(&declared_audit, Layer::OrgProfile, &none).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BaselineAuditNotOrg);
        // R2 first: an audited baseline middleware still fails closed.
        let open = Overrides {
            mode: Some("audit"),
            fail_mode: Some("open"),
            ..Overrides::default()
        };
        let err = declare_in_layer(&d, Layer::OrgProfile, &open).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BaselineFailOpen);
    }
}
