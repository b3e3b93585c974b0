//! Entry point of the browser app: mounts the Yew root component. The
//! explore worker (`static/explore-worker.js`) loads the same module, where
//! there is no window and nothing is mounted.

fn main() {
    #[cfg(target_arch = "wasm32")]
    if web_sys::window().is_some() {
        yew::Renderer::<www::App>::new().render();
    }
}
