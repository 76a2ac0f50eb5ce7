export { default } from './dist/client/index';
