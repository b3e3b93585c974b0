//! Entry point of the browser app: mounts the Yew root component (only
//! where there is a window). The explore worker loads the tools module
//! (`tools/`), not this one.

fn main() {
    #[cfg(target_arch = "wasm32")]
    if web_sys::window().is_some() {
        yew::Renderer::<www::App>::new().render();
    }
}
