from kerasformer.training.run_settings import differing_settings

# What an earlier release saved: none of the settings added since.
OLD = {"task": "translation", "epochs": 4, "model_options": {"embed_dim": 128}}
NEW_DEFAULTS = {"weight_decay": 0.0, "clip_norm": None, "lr_schedule": "constant",
                "average_last": None}  # fmt: skip


def ours(**changes) -> dict:
    options = {"embed_dim": 128, "tie_embeddings": False}
    return {**OLD, **NEW_DEFAULTS, "model_options": options, **changes}


def test_a_run_saved_before_settings_were_added_matches_their_defaults():
    assert differing_settings(OLD, ours()) == []
    assert differing_settings(ours(), OLD) == []


def test_an_added_setting_away_from_its_old_value_differs():
    assert differing_settings(OLD, ours(lr_schedule="cosine", clip_norm=1.0)) == [
        "clip_norm", "lr_schedule",
    ]  # fmt: skip
    tied = ours(model_options={"embed_dim": 128, "tie_embeddings": True})
    assert differing_settings(OLD, tied) == ["model_options"]


def test_a_classifier_saved_before_its_position_options_were_resolved_matches_them():
    saved = {"task": "classification", "model_options": {"embed_dim": 32}}
    resolved = {"embed_dim": 32, "norm_first": False, "position": "learned"}
    now = {"task": "classification", "model_options": resolved}
    assert differing_settings(saved, now) == []
    rotary = {"task": "classification", "model_options": {**resolved, "position": "rotary"}}
    assert differing_settings(saved, rotary) == ["model_options"]


def test_every_differing_name_once_in_order_including_those_on_one_side():
    saved = {**ours(), "seed": 1, "only_saved": True}
    assert differing_settings(saved, ours(seed=2, epochs=5, only_ours=0)) == [
        "epochs", "only_ours", "only_saved", "seed",
    ]  # fmt: skip
