//! The profile file is trusted as ssh trusts its own (issue 44, item 11): a
//! file, or a folder above it, that someone other than root or the user can
//! write is refused whatever it holds, before anything is sent; links on its
//! path are followed with care.
#![cfg(unix)]

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use roomchat_emulator::{Emulator, EmulatorConfig};

const BIN: &str = env!("CARGO_BIN_EXE_roomchat");

/// A fresh folder under the temporary folder (sticky, as `/tmp` is).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("roomchat-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `XDG_CONFIG_HOME/roomchat/config.toml` under `home`, holding `text`, with `mode`.
fn write_profile(home: &Path, text: &str, mode: u32) -> PathBuf {
    let file = home.join("roomchat").join("config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    chmod(&file, mode);
    file
}

/// `roomchat list-chat-rooms` with the key from the environment and the
/// profile under `home`: its exit code and stderr.
fn list_rooms(emu: &Emulator, home: &Path) -> (i32, String) {
    let out = Command::new(BIN)
        .arg("list-chat-rooms")
        .env_remove("ROOMCHAT_BASE_URL")
        .env_remove("ROOMCHAT_PROFILE")
        .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
        .env("XDG_CONFIG_HOME", home)
        .env("NO_PROXY", "*")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains(&emu.private_key()), "{stderr}");
    (out.status.code().unwrap(), stderr)
}

#[test]
fn a_profile_others_can_write_is_refused_whatever_it_holds_and_nothing_is_sent() {
    // The measured attack: a keyless, world-writable profile names another server;
    // the key from the environment must not go there.
    let other = Emulator::start(EmulatorConfig::default()).unwrap();
    let home = scratch("writable");
    let profile = format!("[default]\nbase_url = {:?}\n", other.base_url());
    let file = write_profile(&home, &profile, 0o666);

    let (code, stderr) = list_rooms(&other, &home);
    assert_eq!(code, 24, "{stderr}");
    assert!(
        stderr.contains("writable by others") && stderr.contains("chmod go-w"),
        "{stderr}"
    );
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    for mode in [0o646, 0o664] {
        chmod(&file, mode);
        let (code, stderr) = list_rooms(&other, &home);
        assert_eq!(code, 24, "mode {mode:o}: {stderr}");
    }
    assert!(
        other.journal().is_empty(),
        "a request was sent: {:?}",
        other.journal()
    );

    // Writable by its owner alone, a keyless profile may be read by others.
    chmod(&file, 0o644);
    let (code, stderr) = list_rooms(&other, &home);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(other.journal().len(), 1);
}

#[test]
fn a_folder_above_the_profile_that_others_can_write_is_refused_unless_sticky() {
    let emu = Emulator::start(EmulatorConfig::default()).unwrap();
    let top = scratch("folders");
    let home = top.join("home");
    std::fs::create_dir_all(&home).unwrap();
    chmod(&home, 0o755);
    write_profile(
        &home,
        &format!("[default]\nbase_url = {:?}\n", emu.base_url()),
        0o600,
    );

    for dir in [top.clone(), home.clone(), home.join("roomchat")] {
        chmod(&dir, 0o777);
        let (code, stderr) = list_rooms(&emu, &home);
        assert_eq!(code, 24, "{} 0777: {stderr}", dir.display());
        assert!(
            stderr.contains(&format!("the folder {}", dir.display())),
            "{stderr}"
        );
        // Sticky (as /tmp): nobody else can rename or remove what is in it.
        chmod(&dir, 0o1777);
        let (code, stderr) = list_rooms(&emu, &home);
        assert_eq!(code, 0, "{} 01777: {stderr}", dir.display());
        chmod(&dir, 0o755);
    }
    assert_eq!(emu.journal().len(), 3);
}

#[test]
fn links_on_the_profiles_path_are_followed_with_care() {
    let emu = Emulator::start(EmulatorConfig::default()).unwrap();
    let top = scratch("links");
    let profile = format!("[default]\nbase_url = {:?}\n", emu.base_url());
    // The real file lives in a folder of its own; config.toml is a link to it.
    let real = top.join("real");
    std::fs::create_dir_all(&real).unwrap();
    chmod(&real, 0o755);
    std::fs::write(real.join("profile.toml"), &profile).unwrap();
    chmod(&real.join("profile.toml"), 0o600);
    let home = top.join("home");
    std::fs::create_dir_all(home.join("roomchat")).unwrap();
    chmod(&home, 0o755);
    chmod(&home.join("roomchat"), 0o755);
    symlink(real.join("profile.toml"), home.join("roomchat/config.toml")).unwrap();
    assert_eq!(list_rooms(&emu, &home).0, 0);

    // The folder the link leads to can be written by others: refused.
    chmod(&real, 0o777);
    let (code, stderr) = list_rooms(&emu, &home);
    assert_eq!(code, 24, "{stderr}");
    assert!(
        stderr.contains(&format!("the folder {}", real.display())),
        "{stderr}"
    );
    chmod(&real, 0o755);

    // A folder on the path as written is a link to a folder others can write: refused.
    let shared = top.join("shared");
    std::fs::create_dir_all(shared.join("roomchat")).unwrap();
    chmod(&shared, 0o777);
    chmod(&shared.join("roomchat"), 0o755);
    std::fs::write(shared.join("roomchat/config.toml"), &profile).unwrap();
    chmod(&shared.join("roomchat/config.toml"), 0o600);
    let linked_home = top.join("linked-home");
    symlink(&shared, &linked_home).unwrap();
    let (code, stderr) = list_rooms(&emu, &linked_home);
    assert_eq!(code, 24, "{stderr}");
    assert!(
        stderr.contains(&format!("the folder {}", shared.display())),
        "{stderr}"
    );
}

#[test]
fn a_profile_or_a_link_owned_by_another_user_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to give a file to another user (CI runs as root)");
        return;
    }
    let emu = Emulator::start(EmulatorConfig::default()).unwrap();
    let home = scratch("owner");
    let file = write_profile(
        &home,
        &format!("[default]\nbase_url = {:?}\n", emu.base_url()),
        0o644,
    );
    let nobody = 65534;
    std::os::unix::fs::chown(&file, Some(nobody), None).unwrap();
    let (code, stderr) = list_rooms(&emu, &home);
    assert_eq!(code, 24, "{stderr}");
    assert!(stderr.contains("owned by uid 65534"), "{stderr}");
    std::os::unix::fs::chown(&file, Some(0), None).unwrap();
    assert_eq!(list_rooms(&emu, &home).0, 0);

    // Another user's link in a sticky folder chooses where the profile comes from.
    let sticky = scratch("owner-sticky");
    chmod(&sticky, 0o1777);
    let link = sticky.join("roomchat");
    symlink(home.join("roomchat"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(nobody), None).unwrap();
    let (code, stderr) = list_rooms(&emu, &sticky);
    assert_eq!(code, 24, "{stderr}");
    assert!(
        stderr.contains(&format!("the link {}", link.display())),
        "{stderr}"
    );
}
