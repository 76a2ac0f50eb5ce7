export { default } from './dist/server/index';
